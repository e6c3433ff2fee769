package io.stasis.cli;

import io.stasis.sdk.StasisJson;
import io.stasis.sdk.TokenInfo;
import io.stasis.sdk.TokenRequest;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis token create|ls|rm}: scoped tokens of the caller's tenant. */
@Command(name = "token", mixinStandardHelpOptions = true,
        description = {"Scoped tokens: one sandbox, some permissions, a lifetime. Hand one to an agent instead of your key."},
        subcommands = {TokenCommand.Create.class, TokenCommand.Ls.class, TokenCommand.Rm.class})
final class TokenCommand extends CommandGroup {
    @ParentCommand
    StasisCommand root;

    @Command(name = "create", mixinStandardHelpOptions = true,
            description = {"Issue a token for a sandbox; prints the token, which is shown this once.",
                    "Permissions: sandbox:read sandbox:lifecycle sandbox:delete exec files:read files:write checkpoints network previews."})
    static final class Create implements Callable<Integer> {
        @ParentCommand
        TokenCommand parent;

        @Parameters(index = "0", paramLabel = "SANDBOX", description = "The sandbox's id or name.")
        String sandbox;

        @Option(names = {"-p", "--permission"}, required = true, split = ",", paramLabel = "PERMISSION",
                description = "What the token may do (repeat, or separate with commas).")
        List<String> permissions;

        @Option(names = "--ttl", paramLabel = "DURATION", description = "How long it works: 90s, 30m, 2h, 7d (default 1h, at most 30d).")
        String ttl;

        @Option(names = "--name", paramLabel = "NAME", description = "A label for listings.")
        String name;

        @Override
        public Integer call() {
            var root = parent.root;
            var request = TokenRequest.forSandbox(sandbox, permissions.toArray(String[]::new)).withName(name);
            if (ttl != null) request = request.withTtl(Durations.parse(ttl));
            TokenInfo token = root.client().tokens().issue(request);
            root.io().out().println(root.json() ? StasisJson.write(token) : token.token());
            return ExitCodes.OK;
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true, description = "List tokens that have not expired (never their secrets).")
    static final class Ls implements Callable<Integer> {
        @ParentCommand
        TokenCommand parent;

        @Override
        public Integer call() {
            var root = parent.root;
            List<TokenInfo> tokens = root.client().tokens().list();
            return root.printList(tokens, list -> {
                var table = Table.withHeaders("ID", "NAME", "SANDBOX", "PERMISSIONS", "EXPIRES");
                for (var t : list)
                    table.row(t.id(), t.name() == null ? "" : t.name(), t.scope().sandbox() != null ? t.scope().sandbox() : "volume " + t.scope().volume(),
                            String.join(",", t.permissions()), HumanFormat.time(t.expiresAt()));
                return table.render();
            });
        }
    }

    @Command(name = "rm", mixinStandardHelpOptions = true, description = "Revoke tokens; they stop working at once.")
    static final class Rm implements Callable<Integer> {
        @ParentCommand
        TokenCommand parent;

        @Parameters(index = "0..*", arity = "1..*", paramLabel = "TOKEN_ID")
        List<String> ids;

        @Override
        public Integer call() {
            return DeleteEach.run(parent.root, ids, parent.root.client().tokens()::revoke);
        }
    }
}
