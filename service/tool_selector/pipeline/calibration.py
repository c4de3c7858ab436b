"""Each model's encode rate measured once at start, before the replica is ready.

What a request may encode itself (a small catalog inline, the shortlist's leaders) is decided
by each model's measured seconds per character (``EmbeddingJobs.estimate``). Before this, a
fresh replica read 0.4 ms a character (the slowest machine seen) until a background batch of
that model was measured, and a new catalog's background job runs MiniLM's texts first: its
first answers were the static arm's until bge-small had started, on any machine. Here each
model encodes two of ``TOOLS``' texts to warm its session, then each half of them timed, and
the timings set its rate (``ToolVectors.calibrate``); later batches move it as before.
"""

from __future__ import annotations

from tool_selector_client.wire import Tool


def _tool(name: str, description: str, *params: str) -> Tool:
    properties = {
        p: {"type": "string", "description": f"The {p.replace('_', ' ')}."} for p in params
    }
    schema = {"type": "object", "properties": properties, "required": list(params[:1])}
    return Tool(
        name=name, description=description, definition={"name": name, "input_schema": schema}
    )


#: Eighteen tools written as catalogs write them (a name, a sentence or a paragraph,
#: parameters): the texts they make run from about 30 to 600 characters, as our sets' do.
TOOLS: list[Tool] = [
    _tool("create_issue", "Create a new issue in a repository.", "repo", "title", "body"),
    _tool(
        "list_pull_requests",
        "List the pull requests of a repository, filtered by state, author or label, newest first.",
        "repo",
        "state",
        "author",
    ),
    _tool("send_message", "Post a message to a Slack channel or user.", "channel", "text"),
    _tool(
        "get_weather",
        "Current weather and a five-day forecast for a city: temperature, wind, rain.",
        "city",
        "units",
    ),
    _tool(
        "search_flights",
        "Search one-way or return flights between two airports on given dates. Returns "
        "prices, carriers, stops and durations, cheapest first.",
        "origin",
        "destination",
        "departure_date",
        "return_date",
        "cabin_class",
    ),
    _tool("read_file", "Read a text file from the workspace and return its contents.", "path"),
    _tool(
        "query_database",
        "Run a read-only SQL query against the analytics warehouse and return at most 1,000 "
        "rows as JSON. Use for reporting questions about orders, customers and revenue.",
        "sql",
        "timeout_seconds",
    ),
    _tool("create_calendar_event", "Schedule a meeting.", "title", "start", "end", "attendees"),
    _tool(
        "refund_payment",
        "Refund a captured card payment in full or in part. The refund goes back to the "
        "original card within five to ten business days; a payment can be refunded more than "
        "once until its amount is used up.",
        "payment_id",
        "amount",
        "reason",
    ),
    _tool("translate_text", "Translate text into another language.", "text", "target_language"),
    _tool(
        "list_incidents",
        "List open incidents on the on-call service with their urgency, assignee and the "
        "time they were triggered.",
        "service",
        "urgency",
    ),
    _tool(
        "upload_document",
        "Upload a document to a shared drive folder and return a link to it.",
        "folder_id",
        "file_name",
        "content",
    ),
    _tool(
        "get_stock_quote",
        "Latest price, day range and volume of a listed stock by its ticker symbol.",
        "symbol",
    ),
    _tool(
        "resize_cluster",
        "Change the number of nodes in a Kubernetes node pool. Scaling down drains each node "
        "before it is removed; scaling up waits until the new nodes report ready, or times "
        "out after ten minutes and rolls back.",
        "cluster",
        "node_pool",
        "node_count",
    ),
    _tool("delete_branch", "Delete a branch.", "repo", "branch"),
    _tool(
        "create_spreadsheet_chart",
        "Add a chart to a sheet of a spreadsheet from a range of its cells. The chart type is "
        "one of bar, column, line, area, pie or scatter; the first row of the range gives the "
        "series names and the first column the categories unless told otherwise. Returns the "
        "chart's id and the position it was placed at. Charts update when the cells change; a "
        "range that spans merged cells or hidden rows is read as it is shown.",
        "spreadsheet_id",
        "sheet_name",
        "range",
        "chart_type",
        "title",
        "legend_position",
    ),
    _tool(
        "search_emails",
        "Search the user's mailbox with the same query syntax as the mail client's search box: "
        "from:, to:, subject:, has:attachment, before: and after: dates, labels and free "
        "words. Returns at most 50 messages, newest first, each with its sender, subject, "
        "date, labels and a short snippet of its body; use the returned page token to read "
        "the next page. Messages in the trash and spam are left out unless the query names "
        "them.",
        "query",
        "max_results",
        "page_token",
        "include_spam_trash",
    ),
    _tool(
        "summarize_tickets",
        "Summarize the support tickets opened in a date range: counts by category, the "
        "most common complaints, and tickets still waiting for a first answer.",
        "start_date",
        "end_date",
        "queue",
    ),
]
