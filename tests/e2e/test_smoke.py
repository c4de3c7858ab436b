import httpx

from tests.support import ServiceProcess


def test_service_answers_a_search(service: ServiceProcess) -> None:
    body = {
        "pattern": "send a slack message",
        "tools": [
            {"name": "read_file", "description": "Read a file from disk"},
            {
                "name": "mcp__slack__send_message",
                "description": "Post a message to a Slack channel",
            },
        ],
    }
    r = httpx.post(service.url + "/v1/tool-discovery/search", json=body)
    assert r.status_code == 200
    assert r.json()["selected_names"][0] == "mcp__slack__send_message"
    assert r.headers["x-tool-selector-ranking"] == "hybrid"
