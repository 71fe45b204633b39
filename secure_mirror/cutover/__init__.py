"""The cut-over (issue 41, docs/cutover.md): moving the applications of a mirror's topics and groups from the source
to the target as one resumable sequence of steps, and the way back. ``steps`` holds one module per step and the
ordered table of each direction; ``context`` what a step is given (one set of identities for the whole command) and
gives (its result, its preview); ``machine`` drives the steps, or prints their previews for a dry run. ``plans``
holds the pure plans (the fence, the promotion, the way back's restore) and ``judge`` the pure decisions; ``record``
the record of what was done, which a re-run resumes from, with the steps' typed ``notes``; ``report`` the report
for an auditor; ``way_back`` what failback takes from the forward cut-over."""
