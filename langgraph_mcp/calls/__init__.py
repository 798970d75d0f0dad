"""One call over a connection: the round driver, the asker, paused calls, interceptors, results, tools."""
