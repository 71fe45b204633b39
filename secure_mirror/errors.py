"""Error types a user can act on, and the exit codes the commands return.

Exit codes (stable, documented in docs/commands.md and, one line each, the README):
  0  success
  1  a reported failure: a pre-flight check failed, verify found a mismatch, the mirror job failed
  2  bad input: an invalid profile, a missing file or reference, bad command-line usage
  3  an unexpected error: the details are in the log file named on stderr
  4  the environment is not ready: a missing dependency, a port in use, a server that did not start
  5  a cluster refused the mirror identity: an ACL is missing, a target topic is missing and may not be
     created, source records the checkpoint expects are gone (run, lag, verify); starting again does not help
  130 interrupted (Ctrl-C)
"""

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_ENVIRONMENT = 4
EXIT_REFUSED = 5
EXIT_INTERRUPTED = 130


class SecureMirrorError(Exception):
    """Base of every error whose message is meant for the user (one clear sentence, no traceback)."""

    exit_code = EXIT_FAILED


class BadInputError(SecureMirrorError):
    """The user's input (profile, reference, argument) is wrong; the message names the field and the fix."""

    exit_code = EXIT_BAD_INPUT


class EnvironmentNotReady(SecureMirrorError):
    """Something on this machine is missing or busy (a dependency, a port, a server that did not start)."""

    exit_code = EXIT_ENVIRONMENT


class ClusterRefused(SecureMirrorError):
    """A cluster refused what the mirror identity asked for; the message names the ACL or topic to fix."""

    exit_code = EXIT_REFUSED
