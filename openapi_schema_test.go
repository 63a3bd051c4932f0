package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"searchsvc/integrations/api"
	"searchsvc/integrations/items"
)

// TestOpenAPISchemasMatchViews holds the record and item schemas to the
// Go views the routes encode: every JSON field is described, nothing else
// is, and a field is required exactly when it is never omitted.
func TestOpenAPISchemasMatchViews(t *testing.T) {
	doc := openapiDoc(t)
	schemas, _ := doc["components"].(map[string]any)["schemas"].(map[string]any)
	tests := []struct {
		schema string
		view   reflect.Type
	}{
		{"IntegrationRecord", reflect.TypeFor[api.RecordView]()},
		{"Item", reflect.TypeFor[items.View]()},
	}
	for _, tc := range tests {
		t.Run(tc.schema, func(t *testing.T) {
			s, _ := schemas[tc.schema].(map[string]any)
			props, _ := s["properties"].(map[string]any)
			var described, required []string
			for name := range props {
				described = append(described, name)
			}
			for _, r := range s["required"].([]any) {
				required = append(required, r.(string))
			}
			fields, always := jsonFields(tc.view)
			slices.Sort(described)
			slices.Sort(required)
			if !slices.Equal(described, fields) {
				t.Errorf("properties: got %v,\nwant the view's fields %v", described, fields)
			}
			if !slices.Equal(required, always) {
				t.Errorf("required: got %v,\nwant the fields never omitted %v", required, always)
			}
		})
	}
}

// jsonFields returns the JSON names of t's fields, embedded structs'
// included, sorted, and those without omitempty or omitzero.
func jsonFields(t reflect.Type) (all, always []string) {
	for f := range t.Fields() {
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			a, b := jsonFields(f.Type)
			all, always = append(all, a...), append(always, b...)
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		all = append(all, name)
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			always = append(always, name)
		}
	}
	slices.Sort(all)
	slices.Sort(always)
	return all, always
}
