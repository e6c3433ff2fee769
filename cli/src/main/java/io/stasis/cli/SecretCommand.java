package io.stasis.cli;

import io.stasis.sdk.SecretInfo;
import io.stasis.sdk.StasisJson;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis secret set|ls|rm}: values the egress proxy adds to sandboxes' HTTPS requests. */
@Command(name = "secret", mixinStandardHelpOptions = true,
        description = {"Secrets for network policies' header rules (\"Authorization\": \"Bearer {{secret:NAME}}\").",
                "Values are write-only: no command shows them again."},
        subcommands = {SecretCommand.Set.class, SecretCommand.Ls.class, SecretCommand.Rm.class})
final class SecretCommand extends CommandGroup {
    @ParentCommand
    StasisCommand root;

    @Command(name = "set", mixinStandardHelpOptions = true,
            description = {"Create a secret or replace its value; the value is read from stdin unless --value is given",
                    "(a flag shows up in shell history and process lists: prefer stdin). One trailing newline is dropped."})
    static final class Set implements Callable<Integer> {
        @ParentCommand
        SecretCommand parent;

        @Parameters(index = "0", paramLabel = "NAME", description = "Letters, digits and underscores, not starting with a digit.")
        String name;

        @Option(names = "--value", paramLabel = "VALUE", description = "The value (default: read from stdin).")
        String value;

        @Override
        public Integer call() {
            var root = parent.root;
            String v = value != null ? value : readStdin(root.io().in());
            SecretInfo secret = root.client().secrets().set(name, v);
            if (root.json()) root.io().out().println(StasisJson.write(secret));
            else root.io().out().println(secret.name());
            return ExitCodes.OK;
        }

        private static String readStdin(InputStream in) {
            try {
                String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                if (text.endsWith("\r\n")) return text.substring(0, text.length() - 2);
                return text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
            } catch (IOException e) {
                throw new UncheckedIOException("reading the secret's value from stdin", e);
            }
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true, description = "List secrets by name (never their values).")
    static final class Ls implements Callable<Integer> {
        @ParentCommand
        SecretCommand parent;

        @Override
        public Integer call() {
            var root = parent.root;
            List<SecretInfo> secrets = root.client().secrets().list();
            return root.printList(secrets, list -> {
                var table = Table.withHeaders("NAME", "SET");
                for (SecretInfo s : list) table.row(s.name(), HumanFormat.time(s.createdAt()));
                return table.render();
            });
        }
    }

    @Command(name = "rm", mixinStandardHelpOptions = true,
            description = {"Delete secrets. Policies naming one keep it; their requests then get 502 from the egress proxy.",
                    "Prints each deleted name; goes on past failures and exits with the first failure's code."})
    static final class Rm implements Callable<Integer> {
        @ParentCommand
        SecretCommand parent;

        @Parameters(index = "0..*", arity = "1..*", paramLabel = "NAME", description = "Secret names.")
        List<String> names = new ArrayList<>();

        @Override
        public Integer call() {
            return DeleteEach.run(parent.root, names, parent.root.client().secrets()::delete);
        }
    }
}
