from horon_bundle.cli.main import main

raise SystemExit(main())
