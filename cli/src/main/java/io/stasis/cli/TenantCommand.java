package io.stasis.cli;

import io.stasis.sdk.ApiKeyInfo;
import io.stasis.sdk.StasisJson;
import io.stasis.sdk.TenantInfo;
import io.stasis.sdk.TenantQuota;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis tenant create|ls|show|quota|rm|key-create|key-ls|key-rm}: tenants and their keys, with the root key. */
@Command(name = "tenant", mixinStandardHelpOptions = true,
        description = {"Tenants, their quotas and API keys (root key). A tenant sees only its own sandboxes, checkpoints,",
                "secrets, tokens and events; 'stasis tenant show ID' also works with the tenant's own key."},
        subcommands = {TenantCommand.Create.class, TenantCommand.Ls.class, TenantCommand.Show.class, TenantCommand.Quota.class,
                TenantCommand.Rm.class, TenantCommand.KeyCreate.class, TenantCommand.KeyLs.class, TenantCommand.KeyRm.class})
final class TenantCommand extends CommandGroup {
    @ParentCommand
    StasisCommand root;

    /** The quota flags create and quota share; a flag left out is unlimited (create) or unchanged (quota). */
    static final class QuotaOptions {
        @Option(names = "--max-running", paramLabel = "N", description = "Sandboxes running or paused at once.")
        Integer runningSandboxes;

        @Option(names = "--max-memory-mb", paramLabel = "MB", description = "Memory limits of those sandboxes, added up.")
        Long memoryMb;

        @Option(names = "--max-disk-mb", paramLabel = "MB", description = "Disk limits of all its sandboxes, added up.")
        Long diskMb;

        @Option(names = "--runtimes", paramLabel = "LIST", split = ",",
                description = "The runtimes its sandboxes may start in, comma-separated (e.g. gvisor).")
        List<String> runtimes;

        @Option(names = "--requests-per-second", paramLabel = "N", description = "Its API calls a second, all its keys and tokens together.")
        Integer requestsPerSecond;

        @Option(names = "--request-burst", paramLabel = "N", description = "Calls at once after a quiet spell (default: twice the rate).")
        Integer requestBurst;

        @Option(names = "--creates-per-minute", paramLabel = "N", description = "Its creates and forks a minute.")
        Integer createsPerMinute;

        TenantQuota quota() {
            return new TenantQuota(runningSandboxes, memoryMb, diskMb, runtimes, requestsPerSecond, requestBurst, createsPerMinute);
        }
    }

    private static void print(StasisCommand root, TenantInfo t) {
        root.print(t, () -> table(List.of(t)));
    }

    /** One row a tenant: usage/limit of each quota. */
    private static String table(List<TenantInfo> tenants) {
        var table = Table.withHeaders("ID", "NAME", "RUNNING", "MEMORY MB", "DISK MB", "CREATED");
        for (var t : tenants)
            table.row(t.id(), t.name(), used(t.usage().runningSandboxes(), t.quota().runningSandboxes()),
                    used(t.usage().memoryMb(), t.quota().memoryMb()), used(t.usage().diskMb(), t.quota().diskMb()),
                    HumanFormat.time(t.createdAt()));
        return table.render();
    }

    private static String used(long used, Number limit) {
        return used + "/" + (limit == null ? "-" : limit.toString());
    }

    @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a tenant.")
    static final class Create implements Callable<Integer> {
        @ParentCommand
        TenantCommand parent;

        @Parameters(index = "0", paramLabel = "NAME", description = "Lowercase letters, digits and hyphens.")
        String name;

        @picocli.CommandLine.Mixin
        QuotaOptions quota = new QuotaOptions();

        @Override
        public Integer call() {
            print(parent.root, parent.root.client().tenants().create(name, quota.quota()));
            return ExitCodes.OK;
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true, description = "List tenants with usage/limit ('-': unlimited).")
    static final class Ls implements Callable<Integer> {
        @ParentCommand
        TenantCommand parent;

        @Override
        public Integer call() {
            var root = parent.root;
            List<TenantInfo> tenants = root.client().tenants().list();
            return root.printList(tenants, TenantCommand::table);
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "Show a tenant with its quota and usage.")
    static final class Show implements Callable<Integer> {
        @ParentCommand
        TenantCommand parent;

        @Parameters(index = "0", paramLabel = "TENANT_ID")
        String id;

        @Override
        public Integer call() {
            print(parent.root, parent.root.client().tenants().get(id));
            return ExitCodes.OK;
        }
    }

    @Command(name = "quota", mixinStandardHelpOptions = true,
            description = "Change a tenant's quota: the flags given replace those limits, the others stay.")
    static final class Quota implements Callable<Integer> {
        @ParentCommand
        TenantCommand parent;

        @Parameters(index = "0", paramLabel = "TENANT_ID")
        String id;

        @picocli.CommandLine.Mixin
        QuotaOptions quota = new QuotaOptions();

        @Override
        public Integer call() {
            print(parent.root, parent.root.client().tenants().updateQuota(id, quota.quota()));
            return ExitCodes.OK;
        }
    }

    @Command(name = "rm", mixinStandardHelpOptions = true,
            description = "Delete tenants with their keys, tokens and secrets (refused while one has sandboxes or volumes).")
    static final class Rm implements Callable<Integer> {
        @ParentCommand
        TenantCommand parent;

        @Parameters(index = "0..*", arity = "1..*", paramLabel = "TENANT_ID")
        List<String> ids;

        @Override
        public Integer call() {
            return DeleteEach.run(parent.root, ids, parent.root.client().tenants()::delete);
        }
    }

    @Command(name = "key-create", mixinStandardHelpOptions = true,
            description = "Issue an API key of a tenant; prints the key, which is shown this once.")
    static final class KeyCreate implements Callable<Integer> {
        @ParentCommand
        TenantCommand parent;

        @Parameters(index = "0", paramLabel = "TENANT_ID")
        String id;

        @Override
        public Integer call() {
            var root = parent.root;
            ApiKeyInfo key = root.client().tenants().issueKey(id);
            root.io().out().println(root.json() ? StasisJson.write(key) : key.secret());
            return ExitCodes.OK;
        }
    }

    @Command(name = "key-ls", mixinStandardHelpOptions = true, description = "List a tenant's API keys (never the keys themselves).")
    static final class KeyLs implements Callable<Integer> {
        @ParentCommand
        TenantCommand parent;

        @Parameters(index = "0", paramLabel = "TENANT_ID")
        String id;

        @Override
        public Integer call() {
            var root = parent.root;
            List<ApiKeyInfo> keys = root.client().tenants().keys(id);
            return root.printList(keys, list -> {
                var table = Table.withHeaders("ID", "ROOT", "CREATED");
                for (var k : list) table.row(k.id(), k.root() ? "yes" : "", HumanFormat.time(k.createdAt()));
                return table.render();
            });
        }
    }

    @Command(name = "key-rm", mixinStandardHelpOptions = true, description = "Revoke API keys of a tenant; they stop working at once.")
    static final class KeyRm implements Callable<Integer> {
        @ParentCommand
        TenantCommand parent;

        @Parameters(index = "0", paramLabel = "TENANT_ID")
        String id;

        @Parameters(index = "1..*", arity = "1..*", paramLabel = "KEY_ID")
        List<String> keys;

        @Override
        public Integer call() {
            return DeleteEach.run(parent.root, keys, key -> parent.root.client().tenants().revokeKey(id, key));
        }
    }
}
