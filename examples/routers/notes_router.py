#!/usr/bin/env python3
"""A minimal roomgate namespace in Python, standard library only: the router
`notes.ask` and two tools, spoken as MCP over stdio (JSON-RPC, one message a line).

    roomgate check --command "python3 examples/routers/notes_router.py" --prefix notes. --require answer

docs/routers.md explains every part. With the official SDK (`pip install mcp`) the
same tools are a few decorators; this file shows what goes over the wire.
"""
import json
import sys

NOTES = [
    {"id": "note-1", "url": "https://example.org/notes/1", "text": "Redis keeps the queue"},
    {"id": "note-2", "url": "https://example.org/notes/2", "text": "MCP routers answer deterministically"},
]

# The Answer every router returns as structuredContent; roomgate shows it verbatim.
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean"},
        "answer": {"type": "string"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "url": {"type": ["string", "null"]}},
                "required": ["id"],
            },
        },
        "caveat": {"type": ["string", "null"]},
        "options": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["ok", "answer", "items", "options"],
}
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False}


def answer(ok, line, items=(), caveat=None, options=()):
    return {"ok": ok, "answer": line, "items": list(items), "caveat": caveat, "options": list(options)}


def refs(notes):
    return [{"id": n["id"], "url": n["url"]} for n in notes]


def search(query):
    words = [w for w in query.lower().split() if len(w) > 2]
    found = [n for n in NOTES if any(w in n["text"].lower() for w in words)]
    if not found:
        return answer(False, f'No note mentions "{query}".')
    return answer(True, f"{len(found)} note(s) match.", refs(found))


def recent():
    return answer(True, "The latest notes.", refs(NOTES), caveat="Only the last two are kept.")


def ask(question):
    q = question.lower()
    if q.startswith("search "):
        return search(question[7:])
    if "recent" in q or "latest" in q:
        return recent()
    # Never guess: ask back, naming the tools that could answer. Each option that names a
    # tool is a button; pressing it calls that tool with the original question.
    return answer(False, "Do you want the latest notes or a search?", options=["notes.recent", "notes.search"])


def tool(name, title, description, properties, run):
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    spec = {
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": schema,
        "outputSchema": ANSWER_SCHEMA,
        "annotations": READ_ONLY,
    }
    return spec, run


TOOLS = dict(
    (spec["name"], (spec, run))
    for spec, run in [
        tool("notes.ask", "Ask the notes", "Routes a question to the right notes tool.",
             {"question": {"type": "string"}}, lambda a: ask(a["question"])),
        tool("notes.recent", "Recent notes", "The latest notes.", {}, lambda a: recent()),
        tool("notes.search", "Search notes", "Notes that mention the words of the query.",
             {"query": {"type": "string"}}, lambda a: search(a["query"])),
    ]
)


def handle(method, params):
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "notes", "version": "1.0.0"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [spec for spec, _ in TOOLS.values()]}
    if method == "tools/call":
        spec, run = TOOLS[params["name"]]
        result = run(params.get("arguments") or {})
        return {"content": [{"type": "text", "text": result["answer"]}], "structuredContent": result}
    raise LookupError(method)


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue  # a notification (initialized, cancelled): nothing to answer
    try:
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": handle(message["method"], message.get("params") or {})}
    except LookupError as err:
        reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": f"unknown: {err}"}}
    print(json.dumps(reply), flush=True)
