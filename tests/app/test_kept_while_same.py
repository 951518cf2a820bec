"""What a page derives from objects it gets back unchanged is kept while they are the same objects (by identity: an
equal copy is not the same), and made again for other choices."""

from dashboard.app.kept_while_same import KEPT, KeptWhileSame


def test_an_answer_is_kept_while_it_is_made_from_the_same_objects_with_the_same_choices():
    kept, made = KeptWhileSame(), []
    rows, states = ("E-1", "E-2"), {"E-1": "decided"}

    def make(answer):
        return lambda: made.append(answer) or answer

    assert kept.get((rows, states), "shown", make("first")) == "first"
    assert kept.get((rows, states), "shown", make("again")) == "first"  # the same objects: not made again
    assert kept.get((rows, dict(states)), "shown", make("a copy")) == "a copy"  # equal, not the same: made again
    assert kept.get((rows,), "shown", make("fewer")) == "fewer"
    assert kept.get((rows, states), "vendors", make("another choice")) == "another choice"
    assert made == ["first", "a copy", "fewer", "another choice"]
    for n in range(KEPT):  # the oldest answers give way
        kept.get(((n,),), "shown", make(n))
    assert kept.get((rows, states), "shown", make("made once more")) == "made once more"


def test_the_answers_in_use_are_the_last_to_give_way():
    kept, made = KeptWhileSame(), []
    rows = ("E-1", "E-2")
    kept.get((rows,), "shown", lambda: made.append("shown") or "shown")  # the queue as first shown, read every run
    for n in range(KEPT * 2):  # a run after each decision: a new states object each time
        kept.get((rows,), "shown", lambda: made.append("shown") or "shown")
        kept.get(({n: "decided"},), "by state", lambda: n)
    assert made == ["shown"]  # still kept, though many answers came after it
