"""The worker's emergency exit: stop at once and commit nothing."""

from __future__ import annotations

import logging
import os
from typing import NoReturn

log = logging.getLogger("memstream.worker")


def stop_without_committing(reason: object) -> NoReturn:
    """Exit at once (code 70), committing nothing: a partition this worker owns cannot be
    restored, or output of inputs it owns did not land (committing would ack them without
    it). The open transactions are aborted when the partitions' producers are next
    initialised, and the inputs are processed again from the last commit, by a restarted
    worker or another one."""
    log.critical("%s: stopping the worker without committing", reason)
    os._exit(70)
