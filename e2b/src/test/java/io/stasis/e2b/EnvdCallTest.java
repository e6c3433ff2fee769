package io.stasis.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.e2b.ConnectRpc.RpcException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class EnvdCallTest {
    private static String basic(String user) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":").getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theUserComesFromBasicAuthAndIsUserWithoutIt() {
        assertThat(EnvdCall.userOfBasic(basic("root"))).isEqualTo("root");
        assertThat(EnvdCall.userOfBasic(basic("alice"))).isEqualTo("alice");
        assertThat(EnvdCall.userOfBasic(null)).isEqualTo("user");
        assertThat(EnvdCall.userOfBasic("Bearer x")).isEqualTo("user");
        assertThat(EnvdCall.userOfBasic(basic(""))).isEqualTo("user");
        assertThatThrownBy(() -> EnvdCall.userOfBasic("Basic !!!")).isInstanceOf(RpcException.class);
    }

    @Test
    void relativePathsStartInTheUsersHome() {
        var user = new EnvdCall(null, "sbx_1", "user");
        assertThat(user.resolve("notes/a.txt")).isEqualTo("/home/user/notes/a.txt");
        assertThat(user.resolve("~/a.txt")).isEqualTo("/home/user/a.txt");
        assertThat(user.resolve("~")).isEqualTo("/home/user");
        assertThat(user.resolve("")).isEqualTo("/home/user");
        assertThat(user.resolve("/etc/hosts")).isEqualTo("/etc/hosts");
        var root = new EnvdCall(null, "sbx_1", "root");
        assertThat(root.resolve("a.txt")).isEqualTo("/root/a.txt");
    }
}
