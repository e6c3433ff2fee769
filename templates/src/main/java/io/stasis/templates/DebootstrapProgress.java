package io.stasis.templates;

import java.util.Optional;

/**
 * Turns debootstrap's {@code I: ...} lines into a rough fraction done. Phases and their share:
 * package lists 0-5%, downloading packages 5-40%, extracting 40-50%, unpacking 50-75%,
 * configuring 75-97%. Package counts are known only once downloading ends, so the download
 * phase is measured against a typical count. The fraction never goes backwards.
 */
final class DebootstrapProgress {
    /** Roughly how many packages minbase plus our extras is (bookworm: ~120). */
    static final int TYPICAL_PACKAGES = 130;

    /** One update for the Progress callback. */
    record Step(double fraction, String message) {
    }

    private int retrieved;
    private int extracted;
    private int unpacked;
    private int configured;
    private double fraction;

    /** The update for one output line, if it is a progress line. */
    Optional<Step> accept(String line) {
        if (!line.startsWith("I: ")) return Optional.empty();
        String message = line.substring(3).strip();
        String[] words = message.split("\\s+");
        String verb = words[0];
        double next = switch (verb) {
            case "Retrieving" -> {
                if (words.length >= 3) yield 0.05 + 0.35 * Math.min(1.0, ++retrieved / (double) TYPICAL_PACKAGES);
                yield 0.02; // InRelease, Packages
            }
            case "Validating" -> fraction;
            case "Extracting" -> 0.40 + 0.10 * share(++extracted);
            case "Installing" -> 0.50;
            case "Unpacking" -> message.endsWith("packages...") || message.contains("base system") ? fraction
                    : 0.50 + 0.25 * share(++unpacked);
            case "Configuring" -> message.endsWith("packages...") || message.contains("base system") ? fraction
                    : 0.75 + 0.22 * share(++configured);
            case "Base" -> message.contains("installed successfully") ? 0.97 : fraction;
            default -> fraction;
        };
        fraction = Math.max(fraction, Math.min(next, 0.97));
        return Optional.of(new Step(fraction, message));
    }

    private double share(int count) {
        int total = Math.max(retrieved, 1);
        return Math.min(1.0, count / (double) total);
    }
}
