package io.stasis.examples;

import io.stasis.sdk.BackgroundProcess;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.NetworkInfo;
import io.stasis.sdk.NetworkPolicy;
import io.stasis.sdk.Preview;
import io.stasis.sdk.PreviewRequest;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.StasisClient;
import java.time.Duration;

/**
 * A sandbox that may reach only a few hosts, serving a web page on port 8000 through a private
 * preview URL.
 */
public final class NetworkAndPreview {
    private NetworkAndPreview() {
    }

    public static void main(String[] args) {
        try (StasisClient client = Connect.fromEnvironment()) {
            Sandbox sandbox = client.sandboxes().create(CreateSandboxRequest.builder()
                    .template("tiny")
                    .network(NetworkPolicy.builder().denyByDefault().allow("example.com").build())
                    .build());
            try {
                // Widen the policy later: everything but one host.
                NetworkInfo net = sandbox.updateNetwork(NetworkPolicy.builder()
                        .allowByDefault().deny("169.254.169.254").build());
                System.out.println("network: " + net);

                sandbox.files().mkdir("/tmp/www");
                sandbox.files().write("/tmp/www/index.html", "<h1>hello from a sandbox</h1>\n");
                BackgroundProcess server = sandbox.processes().start("sh", "-c",
                        "cd /tmp/www && exec busybox httpd -f -p 8000");
                System.out.println("web server pid " + server.pid());

                Preview preview = sandbox.previews().create(PreviewRequest.builder(8000)
                        .ttl(Duration.ofHours(1))
                        .build());
                System.out.println("open in a browser: " + preview.linkWithToken());
                System.out.println("or: curl -H '" + Preview.TOKEN_HEADER + ": " + preview.token() + "' " + preview.url());
                sandbox.previews().delete(preview.id());
            } finally {
                sandbox.delete();
            }
        }
    }
}
