package io.stasis.examples;

import io.stasis.sdk.Checkpoint;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.ForkRequest;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.StasisClient;
import java.util.ArrayList;
import java.util.List;

/**
 * Prepare a sandbox once, checkpoint it, fork three copies from the checkpoint, then hibernate
 * the original (memory freed, processes kept on disk) and resume it.
 */
public final class CheckpointForkHibernate {
    private CheckpointForkHibernate() {
    }

    public static void main(String[] args) {
        try (StasisClient client = Connect.fromEnvironment()) {
            Sandbox base = client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").build());
            List<Sandbox> all = new ArrayList<>(List.of(base));
            try {
                base.exec("sh", "-c", "echo prepared > /root/state && (sleep 100000 >/dev/null 2>&1 &)");
                Checkpoint ready = base.checkpoint("prepared", true);
                System.out.println("checkpoint " + ready.id() + ", " + ready.sizeBytes() + " bytes");

                List<Sandbox> forks = base.fork(ForkRequest.builder().checkpoint(ready.id()).count(3).name("try").build());
                all.addAll(forks);
                for (Sandbox fork : forks) {
                    fork.exec("sh", "-c", "echo $RANDOM >> /root/state");
                    System.out.println(fork.name() + ": " + fork.exec("cat", "/root/state").stdout().strip()
                            .replace('\n', ' '));
                }

                base = base.hibernate();
                System.out.println(base.id() + " is " + base.state() + ", "
                        + base.hibernation().imageBytes() + " bytes on disk");
                base = base.resume();
                System.out.println(base.id() + " is " + base.state() + "; processes: "
                        + base.exec("sh", "-c", "pgrep -c sleep").stdout().strip());
            } finally {
                for (Sandbox s : all.reversed()) s.delete();
            }
        }
    }
}
