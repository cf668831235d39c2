"""A minimal Tk text editor for desktop tasks: one text area and a File menu.

Usage: ``python editor.py [FILE]``

- File > New (Ctrl+N), Open... (Ctrl+O), Save (Ctrl+S), Save As... (Ctrl+Shift+S), Quit (Ctrl+Q);
  Save on an untitled document opens the Save As dialog (in ``$HOME``).
- Edit > Undo (Ctrl+Z), Redo (Ctrl+Y), Select All (Ctrl+A).
- The title is ``<file name> - Editor`` (``Untitled - Editor`` for a new document), with a
  leading ``*`` while there are unsaved changes.
- Files are read and written as UTF-8, exactly as typed (no newline is added at the end).

Only the standard library is used.
"""

from __future__ import annotations

import os
import sys
import tkinter as tk
from pathlib import Path
from tkinter import filedialog, messagebox


class Editor:
    """The editor window."""

    def __init__(self, root: tk.Tk, path: Path | None) -> None:
        self.root = root
        self.path: Path | None = None
        self.text = tk.Text(root, undo=True, wrap="word", font=("DejaVu Sans Mono", 12))
        self.text.pack(fill="both", expand=True)
        self._menus()
        self.text.bind("<<Modified>>", lambda _e: self._title())
        root.protocol("WM_DELETE_WINDOW", self.quit)
        if path is not None:
            self.load(path)
        self._title()
        self.text.focus_set()

    def _menus(self) -> None:
        bar = tk.Menu(self.root)
        file_menu = tk.Menu(bar, tearoff=False)
        file_menu.add_command(label="New", accelerator="Ctrl+N", command=self.new)
        file_menu.add_command(label="Open...", accelerator="Ctrl+O", command=self.open)
        file_menu.add_command(label="Save", accelerator="Ctrl+S", command=self.save)
        file_menu.add_command(label="Save As...", accelerator="Ctrl+Shift+S", command=self.save_as)
        file_menu.add_separator()
        file_menu.add_command(label="Quit", accelerator="Ctrl+Q", command=self.quit)
        bar.add_cascade(label="File", menu=file_menu, underline=0)
        edit_menu = tk.Menu(bar, tearoff=False)
        edit_menu.add_command(label="Undo", accelerator="Ctrl+Z", command=lambda: self.text.event_generate("<<Undo>>"))
        edit_menu.add_command(label="Redo", accelerator="Ctrl+Y", command=lambda: self.text.event_generate("<<Redo>>"))
        edit_menu.add_command(label="Select All", accelerator="Ctrl+A", command=self.select_all)
        bar.add_cascade(label="Edit", menu=edit_menu, underline=0)
        self.root.config(menu=bar)
        for sequence, command in (
            ("<Control-n>", self.new),
            ("<Control-o>", self.open),
            ("<Control-s>", self.save),
            ("<Control-S>", self.save_as),
            ("<Control-Shift-s>", self.save_as),
            ("<Control-q>", self.quit),
            ("<Control-a>", self.select_all),
            ("<Control-y>", lambda: self.text.event_generate("<<Redo>>")),
        ):
            self.root.bind_all(sequence, lambda _e, c=command: (c(), "break")[1])  # type: ignore[misc]

    @property
    def modified(self) -> bool:
        """True while there are unsaved changes."""
        return bool(self.text.edit_modified())

    def _title(self) -> None:
        name = self.path.name if self.path is not None else "Untitled"
        self.root.title(f"{'*' if self.modified else ''}{name} - Editor")

    def load(self, path: Path) -> None:
        """Open ``path`` (a new, empty document named ``path`` when it does not exist)."""
        self.path = path
        content = path.read_text(encoding="utf-8") if path.exists() else ""
        self.text.delete("1.0", "end")
        self.text.insert("1.0", content)
        self.text.edit_reset()
        self.text.edit_modified(False)
        self._title()

    def new(self) -> None:
        self.path = None
        self.text.delete("1.0", "end")
        self.text.edit_reset()
        self.text.edit_modified(False)
        self._title()

    def open(self) -> None:
        name = filedialog.askopenfilename(parent=self.root, initialdir=os.environ.get("HOME", "."))
        if name:
            self.load(Path(name))

    def save(self) -> bool:
        """Write the document to its file (asking for a name when it has none)."""
        if self.path is None:
            return self.save_as()
        self.path.write_text(self.text.get("1.0", "end-1c"), encoding="utf-8")
        self.text.edit_modified(False)
        self._title()
        return True

    def save_as(self) -> bool:
        name = filedialog.asksaveasfilename(parent=self.root, initialdir=os.environ.get("HOME", "."))
        if not name:
            return False
        self.path = Path(name)
        return self.save()

    def select_all(self) -> None:
        self.text.tag_add("sel", "1.0", "end-1c")
        self.text.mark_set("insert", "end-1c")

    def quit(self) -> None:
        if self.modified:
            answer = messagebox.askyesnocancel("Editor", "Save changes before quitting?", parent=self.root)
            if answer is None or (answer and not self.save()):
                return
        self.root.destroy()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = tk.Tk(className="HudGymEditor")
    root.geometry("720x480")
    Editor(root, Path(args[0]) if args else None)
    root.mainloop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
