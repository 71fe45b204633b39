"""``secure-mirror demo``: the whole product on the built-in sandbox, in one go."""

from __future__ import annotations

from pathlib import Path

from secure_mirror.demo import run_demo


def add_arguments(parser) -> None:
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path("sandbox-run/demo"),
        help="where the demo's sandbox and rendered files live (default ./sandbox-run/demo)",
    )
    parser.add_argument("--records", type=int, default=1000, help="records per demo topic (default 1000)")
    parser.add_argument(
        "--keep-sandbox",
        action="store_true",
        help="leave the sandbox running afterwards (stop it with `secure-mirror sandbox down`)",
    )


def run(args) -> int:
    return run_demo(args.dir, records=args.records, keep_sandbox=args.keep_sandbox)
