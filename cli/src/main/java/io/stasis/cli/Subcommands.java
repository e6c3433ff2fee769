package io.stasis.cli;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;

/**
 * Adds to the root command only the verb a command line names, so that a CLI call pays for one
 * verb's model instead of every verb's. A command line that names no known verb (none, a typo,
 * {@code --help}) gets all of them, and picocli's usage and suggestions are the same as ever.
 */
final class Subcommands {
    private Subcommands() {
    }

    /** Registers on {@code root} the verbs that {@code args} may need. */
    static void register(CommandLine root, String[] args) {
        Optional<Class<?>> named = verbOf(root.getCommandSpec(), args).flatMap(Subcommands::classNamed)
                .filter(verb -> verb != CompletionCommand.class); // its script covers every verb
        List<Class<?>> verbs = named.<List<Class<?>>>map(List::of).orElse(StasisCommand.SUBCOMMANDS);
        for (Class<?> verb : verbs) root.addSubcommand(verb);
        // exec: everything after the sandbox is the command, its options included.
        Optional.ofNullable(root.getSubcommands().get("exec")).ifPresent(exec -> exec.setStopAtPositional(true));
        // spawn: its options anywhere before --, so a command's unknown options need no --.
        Optional.ofNullable(root.getSubcommands().get("spawn")).ifPresent(spawn -> spawn.setUnmatchedOptionsArePositionalParams(true));
    }

    /** The first word of {@code args} that is neither a root option nor the value of one. */
    static Optional<String> verbOf(CommandSpec root, String[] args) {
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--")) return Optional.empty();
            if (!arg.startsWith("-") || arg.equals("-")) return Optional.of(arg);
            if (arg.contains("=")) continue;
            var option = root.findOption(arg);
            if (option != null && option.arity().max() > 0 && !option.typeInfo().isBoolean()) i++;
        }
        return Optional.empty();
    }

    private static Optional<Class<?>> classNamed(String verb) {
        return StasisCommand.SUBCOMMANDS.stream().filter(verbClass -> names(verbClass).contains(verb)).findFirst();
    }

    private static List<String> names(Class<?> verb) {
        Command command = verb.getAnnotation(Command.class);
        var names = new ArrayList<String>(Arrays.asList(command.aliases()));
        names.add(command.name());
        return names;
    }
}
