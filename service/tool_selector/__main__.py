from tool_selector.cli import main

raise SystemExit(main())
