package io.stasis.core.sandbox;

import java.security.SecureRandom;
import java.util.regex.Pattern;

/** Random, URL-safe id suffixes: lowercase letters and digits, usable as runc ids and file names. */
public final class Ids {
    private static final char[] ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();
    public static final int SUFFIX_LENGTH = 16;
    private static final Pattern SUFFIX = Pattern.compile("[0-9a-z]{" + SUFFIX_LENGTH + "}");

    private Ids() {
    }

    public static String randomSuffix() {
        char[] out = new char[SUFFIX_LENGTH];
        for (int i = 0; i < out.length; i++) out[i] = ALPHABET[RANDOM.nextInt(ALPHABET.length)];
        return new String(out);
    }

    public static boolean isSuffix(String s) {
        return SUFFIX.matcher(s).matches();
    }
}
