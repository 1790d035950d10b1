"""Plain functions grouped by feature, each with the arguments to check its gradient at."""
