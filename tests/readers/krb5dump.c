/* Print what MIT krb5's profile library reads from a krb5.conf, one line per relation:
 *   <section>/<subsection>/.../<name>\t<value>      (a subsection alone: <path>/<name>\t{)
 * Names and values are printed with \\, \t and \n escaped. Used by tests/reliability/test_render_readers.py.
 * Build: cc -o krb5dump krb5dump.c -lkrb5 ; run: krb5dump FILE
 */
#include <profile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(const char *s) {
    for (; *s; s++) {
        if (*s == '\\') fputs("\\\\", stdout);
        else if (*s == '\t') fputs("\\t", stdout);
        else if (*s == '\n') fputs("\\n", stdout);
        else putchar(*s);
    }
}

static int dump(profile_t profile, const char **names, int depth) {
    void *iter;
    char *name, *value;
    long err = profile_iterator_create(profile, names, PROFILE_ITER_LIST_SECTION, &iter);
    if (err) return (int)err;
    while ((err = profile_iterator(&iter, &name, &value)) == 0 && name != NULL) {
        for (int i = 0; i < depth; i++) { put(names[i]); putchar('/'); }
        put(name);
        putchar('\t');
        if (value != NULL) {
            put(value);
            putchar('\n');
        } else {
            puts("{");
            const char *child[32];
            for (int i = 0; i < depth; i++) child[i] = names[i];
            child[depth] = name;
            child[depth + 1] = NULL;
            if (depth < 30) dump(profile, child, depth + 1);
        }
        profile_release_string(name);
        if (value) profile_release_string(value);
    }
    profile_iterator_free(&iter);
    return err ? (int)err : 0;
}

int main(int argc, char **argv) {
    profile_t profile;
    const char *files[] = {argv[1], NULL};
    const char *top[] = {NULL};
    if (argc != 2) return 2;
    long err = profile_init_flags(files, PROFILE_INIT_ALLOW_MODULE, &profile);
    if (err) { fprintf(stderr, "profile_init: %ld\n", err); return 1; }
    err = dump(profile, top, 0);
    profile_release(profile);
    if (err) { fprintf(stderr, "iterate: %ld\n", err); return 1; }
    return 0;
}
