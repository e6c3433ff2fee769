package io.stasis.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/** {@code stasis network show|set}: a sandbox's address and egress policy. */
@Command(name = "network", mixinStandardHelpOptions = true,
        description = {"Show or replace a sandbox's network policy: where it may connect.",
                "Deny entries win over allow entries, which win over the default. Entries are domains "
                        + "(example.com, *.example.com), IPv4 addresses and CIDR networks (10.0.0.0/8)."},
        subcommands = {NetworkShowCommand.class, NetworkSetCommand.class})
final class NetworkCommand extends CommandGroup {
    @ParentCommand
    StasisCommand root;
}
