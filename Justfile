# hearth recipes. `just` is optional: each recipe only names the plain go
# command it runs (npm's rust-just package ships `just` if you want it).

commit := `git rev-parse --short HEAD 2>/dev/null || echo dev`
ldflags := "-X github.com/hearth-mcp/hearth/pkg/version.Commit=" + commit

# Build both binaries into ./bin
build:
    go build -ldflags "{{ldflags}}" -o bin/ ./daemon/hearthd ./shim/hearth

# Unit and end-to-end tests (the README's test command)
test:
    go test ./...

# The checks CI runs before the tests: gofmt, go vet, staticcheck (pinned as
# in .ci/run; go run fetches it)
lint:
    test -z "$(gofmt -l .)"
    go vet ./...
    go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

# End-to-end tests only, verbose
e2e:
    go test -count=1 -v ./test/

# Every benchmark of README.md's performance table, in one run (about half
# an hour on 2 cores), then the table itself, in Markdown: peer comparisons
# take turns and give the range over their rounds. One benchmark alone:
# go test ./test/bench -run '^$' -bench '^ShimVsPeers$' -benchtime 18000x
bench:
    go run ./test/bench/internal/benchtable -save bench.out

# Run the daemon on its embedded defaults (Unix socket)
run:
    go run ./daemon/hearthd serve

# Install both binaries into $GOBIN (they belong in one directory: the shim
# starts the hearthd beside it)
install:
    go install -ldflags "{{ldflags}}" ./daemon/hearthd ./shim/hearth
