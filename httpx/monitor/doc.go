// Package monitor keeps, in memory, what the administrator's dashboard
// (GET /v1/admin/dashboard, docs/operations.md "The dashboard") tells
// beside the stores' own figures: the last errors the service logged, as
// sentences without personal data (Errors), and how fast the data under
// DATA_DIR grows (Growth). Nothing here is written to disk: a restart
// starts both afresh.
package monitor
