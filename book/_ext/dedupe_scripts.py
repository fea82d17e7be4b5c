"""Sphinx extension: drop repeated inline scripts from each page.

sphinx-thebe adds its configuration script when the environment is read; a build
that reads it twice declares ``const THEBE_JS_URL`` twice, a JavaScript error on
every page. Identical scripts (same file, same body) are kept once; an inline script may come with the
file name ``None`` or ``""``, which count as the same.
"""


def _dedupe(app, pagename, templatename, context, doctree):
    seen, kept = set(), []
    for script in context.get("script_files", []):
        name = getattr(script, "filename", script) or ""  # the same inline script can come as filename None or ""
        key = (str(name), tuple(sorted((k, str(v)) for k, v in getattr(script, "attributes", {}).items())))
        if key in seen:
            continue
        seen.add(key)
        kept.append(script)
    if "script_files" in context:
        context["script_files"][:] = kept


def setup(app):
    app.connect("html-page-context", _dedupe, priority=1)  # first: a later handler may return a template and end the event
    return {"parallel_read_safe": True, "parallel_write_safe": True}
