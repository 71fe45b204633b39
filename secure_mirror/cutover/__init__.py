"""The cut-over (issue 41, docs/cutover.md): moving the applications of a mirror's topics and groups from the source
to the target as one resumable sequence of steps. ``fence`` holds the pure plans (which bindings the fence changes
on the source, which the promotion grants on the target, and the way back); ``state`` the record of what was done,
which a re-run resumes from."""
