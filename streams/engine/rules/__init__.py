"""The consolidation rules, one module per rule family. Each rule is a pure function of a
:class:`streams.engine.context.CycleContext`; ``streams.engine.cycle`` orders them."""
