module searchsvc

go 1.26.0

require (
	golang.org/x/crypto v0.58.0
	golang.org/x/oauth2 v0.37.0
)

require golang.org/x/sys v0.49.0 // indirect
