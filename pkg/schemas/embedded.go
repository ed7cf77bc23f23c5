package schemas

import (
	"embed"
	"io/fs"
)

// The default catalog: synesthetic-schemas, copied unchanged with its MIT
// license into synesthetic/ (synesthetic/SOURCE says which release). It is
// served when no schema root is configured, so the schema tools work on a
// fresh machine.
//
//go:embed synesthetic/jsonschema synesthetic/examples
var embedded embed.FS

// EmbeddedVersion is the synesthetic-schemas release embedded.
const EmbeddedVersion = "0.7.3"

// EmbeddedOrigin names the embedded catalog in messages.
const EmbeddedOrigin = "embedded synesthetic-schemas " + EmbeddedVersion

// EmbeddedSchemas is the embedded catalog's schema root.
func EmbeddedSchemas() Root { return Root{FS: sub("synesthetic/jsonschema"), Origin: EmbeddedOrigin} }

// EmbeddedExamples is the embedded catalog's example root.
func EmbeddedExamples() Root { return Root{FS: sub("synesthetic/examples"), Origin: EmbeddedOrigin} }

func sub(dir string) fs.FS {
	f, err := fs.Sub(embedded, dir)
	if err != nil { // only for an invalid literal path above
		panic(err)
	}
	return f
}
