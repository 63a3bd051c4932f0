package mail_test

import (
	"testing"

	"searchsvc/integrations/mail"
)

func TestHTMLHostile(t *testing.T) {
	tests := []struct{ name, html, want string }{
		{"unclosed comment", "<p>a</p><!-- b <p>c</p>", "a"},
		{"unclosed script", "a<script>b", "a"},
		{"unclosed tag", "a<div class=x", "a"},
		{"unclosed quote", `a<a href="x>b</a> c`, "ab c"},
		{"lone lt", "1 < 2 <3 <", "1 < 2 <3 <"},
		{"upper case", "<SCRIPT>x</SCRIPT><P>y</P>", "y"},
		{"attribute with >", `<a title='x>y'>z</a>`, "z"},
		{"entities", "&amp;lt; &#x41; &#66; &bogus;", "&lt; A B &bogus;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := mail.Parse([]byte("Content-Type: text/html\n\n" + tt.html))
			if err != nil || m.Text != tt.want {
				t.Errorf("got %q, %v; want %q", m.Text, err, tt.want)
			}
		})
	}
}
