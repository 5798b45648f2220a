package compare

// Rate is n of runs in the report's one unit for a rate, "8% [4.1–15]":
// the percentage and its 95% Wilson interval (report.Wilson), for other
// reports (cmd/realreport) to print rates as this one does.
func Rate(n, runs int) string { return rate(n, runs) }
