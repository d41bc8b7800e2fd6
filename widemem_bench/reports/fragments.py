"""How a report section becomes README.md's short block and its own fragment
(``reports/<experiment>.md``): heading, command, first paragraph, the marked headline
tables and the figures in README.md; the whole section in the fragment.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["README_CLOSE", "README_OPEN", "TOOL_FRAGMENTS", "fence", "first_paragraph", "fragment_title",
           "readme_blocks", "summarise"]


def fence(cmd: str) -> str:
    return f"```bash\n{cmd}\n```"


# Sections whose reports/<name>.md another tool writes (`make perf`): linked, never overwritten.
TOOL_FRAGMENTS = ("perf",)
_IMAGE = re.compile(r"^!\[[^\]]*\]\(figures/[^)]+\)\s*$")


def first_paragraph(body: str) -> str:
    """The first block of prose (no heading, table, fence, image or command line)."""
    fenced = False
    para: list[str] = []
    for line in body.splitlines():
        st = line.strip()
        if st.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        prose = bool(st) and not st.startswith(("#", "|", "![", "<!--", "Command:", "**", "†"))
        if prose:
            para.append(st)
        elif para:
            break
    return " ".join(para)


# A section marks the table its README block must show (a headline the short form would
# otherwise leave to the fragment) between these two lines.
README_OPEN, README_CLOSE = "<!-- readme -->", "<!-- /readme -->"


def readme_blocks(body: str) -> str:
    """The lines between README_OPEN and README_CLOSE markers, blocks joined by a blank line."""
    blocks: list[list[str]] = []
    inside = False
    for line in body.splitlines():
        st = line.strip()
        if st == README_OPEN:
            inside, blocks = True, [*blocks, []]
        elif st == README_CLOSE:
            inside = False
        elif inside:
            blocks[-1].append(line)
    return "\n\n".join("\n".join(b).strip() for b in blocks if any(x.strip() for x in b))


def summarise(name: str, md: str, out_dir: Path, command: str | None, owned: bool = True) -> str:
    """Write the whole section to reports/<name>.md; return its short form for README.md:
    heading, command, first paragraph, figures and the link to the fragment."""
    head_line, _, rest = md.strip().partition("\n")
    if not head_line.startswith("#"):
        head_line, rest = f"## {name}", md
    fenced = fence(command) if command else ""
    frag = out_dir / f"{name}.md"
    if owned:
        own_fence = fenced if command and command not in rest else ""
        parts = [head_line.replace("## ", "# ", 1), "", *([own_fence, ""] if own_fence else []), rest.strip()]
        frag.write_text("\n".join(parts).strip() + "\n")
    figs = [ln.strip() for ln in rest.splitlines() if _IMAGE.match(ln.strip())]
    para = first_paragraph(rest)
    keep = readme_blocks(rest)
    out = [head_line, "", *([fenced, ""] if fenced else []), *([para, ""] if para else []),
           *([keep, ""] if keep else []), *figs, *([""] if figs else [])]
    if frag.is_file():
        out.append(f"Tables and details: [{name}.md]({name}.md).")
    return "\n".join(out).rstrip() + "\n"


def fragment_title(path: Path) -> str:
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return path.stem
