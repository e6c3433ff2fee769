package io.stasis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class CpLocationTest {
    @Test
    void idColonPathIsRemote() {
        assertThat(CpLocation.parse("sbx_0f3k2m9x8c7v6b5n:/root/a.txt"))
                .isEqualTo(new CpLocation.Remote("sbx_0f3k2m9x8c7v6b5n", "/root/a.txt"));
        assertThat(CpLocation.parse("my-agent.v2_x:/a:b")).isEqualTo(new CpLocation.Remote("my-agent.v2_x", "/a:b"));
        assertThat(CpLocation.parse("box:relative/x")).isEqualTo(new CpLocation.Remote("box", "relative/x"));
        assertThat(CpLocation.parse("box:")).isEqualTo(new CpLocation.Remote("box", "/"));
    }

    @Test
    void anythingElseIsLocal() {
        assertThat(CpLocation.parse("/tmp/a:b")).isEqualTo(new CpLocation.Local(Path.of("/tmp/a:b")));
        assertThat(CpLocation.parse("./box:x")).isEqualTo(new CpLocation.Local(Path.of("./box:x")));
        assertThat(CpLocation.parse("file.txt")).isEqualTo(new CpLocation.Local(Path.of("file.txt")));
        assertThat(CpLocation.parse(".hidden:x")).isEqualTo(new CpLocation.Local(Path.of(".hidden:x")));
        assertThat(CpLocation.parse("dir/box:x")).isEqualTo(new CpLocation.Local(Path.of("dir/box:x")));
    }

    @Test
    void remoteNames() {
        assertThat(new CpLocation.Remote("b", "/root/a.txt").baseName()).isEqualTo("a.txt");
        assertThat(new CpLocation.Remote("b", "/root/dir/").baseName()).isEqualTo("dir");
        assertThat(new CpLocation.Remote("b", "/").baseName()).isEmpty();
        assertThat(new CpLocation.Remote("b", "/root/..").baseName()).isEmpty();
        assertThat(new CpLocation.Remote("b", "x").baseName()).isEqualTo("x");
        assertThat(new CpLocation.Remote("b", "/root").child("a")).isEqualTo("/root/a");
        assertThat(new CpLocation.Remote("b", "/").child("a")).isEqualTo("/a");
    }
}
