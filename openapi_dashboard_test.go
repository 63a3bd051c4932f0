package main

import (
	"reflect"
	"slices"
	"testing"

	"searchsvc/httpx/monitor"
	"searchsvc/integrations/api"
)

// TestOpenAPIDashboardAndSearchResult holds the schemas of GET
// /v1/admin/dashboard's answer, its parts, and of a search result to the
// Go types the routes encode, as TestOpenAPISchemasMatchViews does for
// records and items.
func TestOpenAPIDashboardAndSearchResult(t *testing.T) {
	doc := openapiDoc(t)
	schemas, _ := doc["components"].(map[string]any)["schemas"].(map[string]any)
	dash, _ := schemas["Dashboard"].(map[string]any)
	props := func(s map[string]any) map[string]any { p, _ := s["properties"].(map[string]any); return p }
	part := func(name string) map[string]any { s, _ := props(dash)[name].(map[string]any); return s }
	users, _ := part("users")["items"].(map[string]any)
	tests := []struct {
		name   string
		schema map[string]any
		view   reflect.Type
	}{
		{"Dashboard", dash, reflect.TypeFor[dashboardView]()},
		{"Dashboard.disk", part("disk"), reflect.TypeFor[diskView]()},
		{"Dashboard.sizes", part("sizes"), reflect.TypeFor[sizesView]()},
		{"Dashboard.users", users, reflect.TypeFor[userLoadView]()},
		{"Dashboard.errors", part("errors"), reflect.TypeFor[errorsView]()},
		{"ErrorSentence", schemas["ErrorSentence"].(map[string]any), reflect.TypeFor[monitor.Error]()},
		{"SearchResult", schemas["SearchResult"].(map[string]any), reflect.TypeFor[api.SearchResult]()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var described, required []string
			for name := range props(tc.schema) {
				described = append(described, name)
			}
			req, _ := tc.schema["required"].([]any)
			for _, r := range req {
				required = append(required, r.(string))
			}
			fields, always := jsonFields(tc.view)
			slices.Sort(described)
			slices.Sort(required)
			if !slices.Equal(described, fields) {
				t.Errorf("properties: got %v,\nwant the type's fields %v", described, fields)
			}
			if !slices.Equal(required, always) {
				t.Errorf("required: got %v,\nwant the fields never omitted %v", required, always)
			}
		})
	}
}
