package io.stasis.examples;

import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.ExecResult;
import io.stasis.sdk.FileInfo;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.StasisClient;
import java.nio.charset.StandardCharsets;

/**
 * Create a sandbox, run a command, write and read a file, delete the sandbox.
 *
 * <pre>
 * STASIS_URL=http://127.0.0.1:7070 STASIS_API_KEY=sk_... java -cp ... io.stasis.examples.Quickstart
 * </pre>
 */
public final class Quickstart {
    private Quickstart() {
    }

    public static void main(String[] args) {
        try (StasisClient client = Connect.fromEnvironment()) {
            Sandbox sandbox = client.sandboxes().create(CreateSandboxRequest.builder()
                    .template(args.length > 0 ? args[0] : "tiny")
                    .metadata("example", "quickstart")
                    .build());
            System.out.println("created " + sandbox.id() + " (" + sandbox.state() + ")");
            try {
                ExecResult hello = sandbox.exec("sh", "-c", "echo hello from $(hostname)");
                System.out.print(hello.stdout());

                sandbox.files().write("/tmp/notes.txt", "written by the SDK\n");
                ExecResult cat = sandbox.exec("cat", "/tmp/notes.txt");
                System.out.print("cat: " + cat.stdout());
                for (FileInfo f : sandbox.files().list("/tmp")) {
                    System.out.println(f.type() + " " + f.path() + " " + f.size() + " bytes");
                }
                String back = new String(sandbox.files().read("/tmp/notes.txt"), StandardCharsets.UTF_8);
                System.out.print("read back: " + back);
            } finally {
                sandbox.delete();
                System.out.println("deleted " + sandbox.id());
            }
        }
    }
}
