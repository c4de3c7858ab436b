"""The HTTP edge: the app factory, handlers, the guard in front of them, auth, workers, error
rendering and the OpenAPI document. Only the app factory and the CLI are imported from here."""
