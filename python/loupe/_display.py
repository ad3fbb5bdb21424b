"""How Loupe's results show themselves in a notebook: text as the REPL prints it, with an HTML
form (a diff coloured by line, loops in a scrolling box, a profile as a table). Every name is
escaped: text from a model or a session is never markup."""

import html

__all__ = ["Diff", "Profile", "Text"]

_BOX = ("font-family: monospace; font-size: 12px; white-space: pre; overflow: auto; "
        "max-height: 40em; border: 1px solid #ccc; padding: 4px")


class Text(str):
    """What a command printed; a notebook shows it in a monospace box."""

    def _repr_html_(self):
        return f'<div style="{_BOX}">{html.escape(self)}</div>'


class Diff(Text):
    """`:diff`'s text: the pass's effect line, then the unified diff of the printed IR; a
    notebook colours added lines green and removed lines red."""

    def _repr_html_(self):
        rows = []
        for line in self.splitlines():
            colour = ("#1ea03c" if line.startswith("+") and not line.startswith("+++")
                      else "#d21e1e" if line.startswith("-") and not line.startswith("---")
                      else "#555" if line.startswith("@@") else None)
            text = html.escape(line)
            rows.append(f'<span style="color: {colour}">{text}</span>' if colour else text)
        return f'<div style="{_BOX}">' + "\n".join(rows) + "</div>"


class Profile(list):
    """:profile's rows (node, kernel, ms, min_ms, max_ms, gflops, percent_peak), slowest first
    in a notebook's table."""

    _COLUMNS = [("node", "node", "{}"), ("kernel", "kernel", "{}"), ("ms", "median ms", "{:.3f}"),
                ("min_ms", "min ms", "{:.3f}"), ("max_ms", "max ms", "{:.3f}"),
                ("gflops", "GFLOP/s", "{:.1f}"), ("percent_peak", "% of peak", "{:.0f}")]

    def _repr_html_(self):
        head = "".join(f"<th>{title}</th>" for _, title, _ in self._COLUMNS)
        body = []
        for row in sorted(self, key=lambda r: -r["ms"]):
            cells = "".join(f"<td>{html.escape(fmt.format(row[key]))}</td>"
                            for key, _, fmt in self._COLUMNS)
            body.append(f"<tr>{cells}</tr>")
        total = sum(r["ms"] for r in self)
        return (f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
                f"<tfoot><tr><td>total</td><td></td><td>{total:.3f}</td><td></td><td></td>"
                "<td></td><td></td></tr></tfoot></table>")
