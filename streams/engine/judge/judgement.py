"""The judge's answer: whether two memory statements contradict, how sure it is, and why."""

from __future__ import annotations

from dataclasses import dataclass

CUES = ("negation", "antonym", "conflicting_value", "llm", "none")


@dataclass(frozen=True, slots=True)
class Judgement:
    contradicts: bool
    confidence: float  # [0, 1]: confidence that the two statements contradict
    cue: str  # "negation" | "antonym" | "conflicting_value" | "none"
    explanation: str  # names the cue and the conflicting parts

    def __post_init__(self) -> None:
        if self.cue not in CUES:
            raise ValueError(f"unknown cue {self.cue!r}")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence {self.confidence} is outside [0, 1]")


# Confidences: above 0.7 exactly when the pair contradicts, at most 0.4 otherwise.
NEGATION_CONFIDENCE = 0.9
ANTONYM_CONFIDENCE = 0.85
COVERED_NEGATION_CONFIDENCE = 0.8  # "lives in Berlin" vs "does not live in Germany"
CATEGORY_NEGATION_CONFIDENCE = 0.8  # "has no children" vs "my son ..."
EXCLUSION_CONFIDENCE = 0.8  # "is vegetarian" vs "eats meat"
VALUE_CONFIDENCE = {
    "time": 0.9,
    "date": 0.9,
    "quantity": 0.85,
    "period": 0.85,
    "number": 0.85,
    "antonym": 0.85,
    "category": 0.85,
    "temporal": 0.85,
    "place": 0.85,
    "name": 0.8,
    "generic": 0.75,
}
EQUIVALENT_CONFIDENCE = 0.0
UNRELATED_CONFIDENCE = 0.05
RELATED_VALUES_CONFIDENCE = 0.1
BOTH_NEGATIVE_CONFIDENCE = 0.1
MULTI_VALUED_CONFIDENCE = 0.2
DIFFERENT_TIMES_CONFIDENCE = 0.3
UNCERTAIN_VALUES_CONFIDENCE = 0.4


def no_contradiction(confidence: float, why: str) -> Judgement:
    return Judgement(False, confidence, "none", f"no contradiction: {why}")
