package io.stasis.catalog.sql;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where a PostgreSQL catalog lives, from {@code postgresql://USER[:PASSWORD]@HOST[:PORT]/DB}. The
 * password may instead come from {@code PGPASSWORD}, as for PostgreSQL's own tools, so that it is
 * not on a command line. {@link #toString} never shows the password.
 *
 * @param host     a host name or address; an IPv6 address in brackets
 * @param port     5432 unless the URL says otherwise
 * @param database the database's name
 * @param user     the role to log in as
 * @param password empty: PostgreSQL decides (trust, peer, or a refusal naming the role)
 */
public record PostgresLocation(String host, int port, String database, String user, Optional<String> password) {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,63}");

    public PostgresLocation {
        if (host.isBlank()) throw new IllegalArgumentException("the catalog URL has no host");
        if (port < 1 || port > 65_535) throw new IllegalArgumentException("the catalog URL's port must be 1-65535, was " + port);
        if (!NAME.matcher(database).matches())
            throw new IllegalArgumentException("the catalog URL's database must be 1-63 of A-Z a-z 0-9 _ . -, was '" + database + "'");
        if (user.isEmpty()) throw new IllegalArgumentException("the catalog URL has no user: postgresql://USER[:PASSWORD]@HOST[:PORT]/DB");
    }

    /** Whether {@code value} names a PostgreSQL catalog rather than a file. */
    public static boolean isPostgresUrl(String value) {
        return value.startsWith("postgresql://") || value.startsWith("postgres://");
    }

    /**
     * Parses {@code postgresql://USER[:PASSWORD]@HOST[:PORT]/DB} (also {@code postgres://});
     * {@code passwordFallback} (the caller's {@code PGPASSWORD}) when the URL has none.
     * {@link IllegalArgumentException} saying what is wrong, never quoting the password.
     */
    public static PostgresLocation parse(String url, Optional<String> passwordFallback) {
        if (!isPostgresUrl(url)) throw new IllegalArgumentException("a catalog URL starts with postgresql://");
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("the catalog URL is not a URL: postgresql://USER[:PASSWORD]@HOST[:PORT]/DB");
        }
        if (uri.getHost() == null) throw new IllegalArgumentException("the catalog URL has no host: postgresql://USER[:PASSWORD]@HOST[:PORT]/DB");
        if (uri.getRawQuery() != null || uri.getRawFragment() != null)
            throw new IllegalArgumentException("the catalog URL takes no ?parameters or #fragment");
        String path = uri.getPath() == null ? "" : uri.getPath();
        if (!path.startsWith("/") || path.length() < 2)
            throw new IllegalArgumentException("the catalog URL names no database: postgresql://USER[:PASSWORD]@HOST[:PORT]/DB");
        String userInfo = Optional.ofNullable(uri.getRawUserInfo()).orElse("");
        int colon = userInfo.indexOf(':');
        String user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
        Optional<String> password = colon < 0 ? passwordFallback.filter(p -> !p.isEmpty()) : Optional.of(decode(userInfo.substring(colon + 1)));
        return new PostgresLocation(uri.getHost(), uri.getPort() < 0 ? 5432 : uri.getPort(), path.substring(1), user, password);
    }

    private static String decode(String part) {
        return URLDecoder.decode(part.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** The JDBC URL, without credentials. */
    String jdbcUrl() {
        return "jdbc:postgresql://" + host + ":" + port + "/" + database;
    }

    @Override
    public String toString() {
        return "postgresql://" + user + "@" + host + ":" + port + "/" + database;
    }
}
