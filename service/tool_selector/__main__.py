from tool_selector.offline.cli import main

raise SystemExit(main())
