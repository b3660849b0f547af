module github.com/cordisgo/harness

go 1.26.8

require (
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
)
