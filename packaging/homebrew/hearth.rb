# Homebrew formula for hearth's release archives. tools/release fills in the
# version and each archive's SHA-256 from the archives it built and writes
# the result to dist/hearth.rb, which goes into the tap.
class Hearth < Formula
  desc "One warm MCP backend per user: a daemon and the stdio shim MCP clients launch"
  homepage "https://github.com/hearth-mcp/hearth"
  version "@VERSION@"
  license "Apache-2.0"

  on_macos do
    on_arm do
      url "https://github.com/hearth-mcp/hearth/releases/download/v@VERSION@/hearth_@VERSION@_darwin_arm64.tar.gz"
      sha256 "@SHA256_darwin_arm64@"
    end
    on_intel do
      url "https://github.com/hearth-mcp/hearth/releases/download/v@VERSION@/hearth_@VERSION@_darwin_amd64.tar.gz"
      sha256 "@SHA256_darwin_amd64@"
    end
  end

  on_linux do
    on_arm do
      url "https://github.com/hearth-mcp/hearth/releases/download/v@VERSION@/hearth_@VERSION@_linux_arm64.tar.gz"
      sha256 "@SHA256_linux_arm64@"
    end
    on_intel do
      url "https://github.com/hearth-mcp/hearth/releases/download/v@VERSION@/hearth_@VERSION@_linux_amd64.tar.gz"
      sha256 "@SHA256_linux_amd64@"
    end
  end

  def install
    # Both binaries in one directory: the shim starts the hearthd beside it.
    bin.install "hearthd", "hearth"
  end

  service do
    run [opt_bin/"hearthd", "serve"]
    keep_alive successful_exit: false
  end

  test do
    assert_match version.to_s, shell_output("#{bin}/hearthd version")
  end
end
