package io.stasis.cli;

import io.stasis.sdk.Preview;
import io.stasis.sdk.PreviewRequest;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis preview create ID PORT}: prints the preview's URLs, and the token of a private one. */
@Command(name = "create", mixinStandardHelpOptions = true,
        description = {"Serve a port of a sandbox over HTTP and print its URLs.",
                "A private preview's token is printed only now; OPEN is the URL to open once in a browser."})
final class PreviewCreateCommand implements Callable<Integer> {
    @ParentCommand
    PreviewCommand parent;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1", paramLabel = "PORT", description = "The sandbox's TCP port (1-65535).")
    int port;

    @Option(names = "--public", description = "No token needed: anyone who reaches the preview listener gets through.")
    boolean isPublic;

    @Option(names = "--ttl", paramLabel = "DURATION", converter = Durations.class,
            description = "Expire after this long (e.g. 2h, 7d; at most 30d). Default: never.")
    Duration ttl;

    @Override
    public Integer call() {
        var root = parent.root;
        Preview preview = root.client().sandboxes().previews(id)
                .create(PreviewRequest.builder(port).isPublic(isPublic).ttl(ttl).build());
        if (root.json()) {
            root.printJson(preview);
            return ExitCodes.OK;
        }
        root.io().out().print(render(preview));
        return ExitCodes.OK;
    }

    /** One preview as key / value rows; TOKEN and OPEN only when the token is known (in the answer to create). */
    static String render(Preview preview) {
        var table = Table.withoutHeaders().row("ID", preview.id()).row("PORT", preview.port())
                .row("ACCESS", preview.isPublic() ? "public" : "token")
                .row("URL", preview.url()).row("PATH URL", preview.pathUrl());
        if (preview.token() != null) table.row("TOKEN", preview.token()).row("OPEN", preview.linkWithToken());
        table.row("EXPIRES", preview.expiresAt() == null ? "never" : HumanFormat.time(preview.expiresAt()));
        return table.render();
    }
}
