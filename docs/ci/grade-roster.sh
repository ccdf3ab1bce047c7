#!/usr/bin/env bash
# The hidden grading of a class, run by the grading repository's workflow (docs/ci/github-actions-hidden.yml,
# docs/ci/gitlab-ci-hidden.yml) from the grading repository's root, with the kit checked out and built in kit/:
#   bash kit/docs/ci/grade-roster.sh fetch ROSTER     each student's lab files into submissions/OWNER+NAME/
#   bash kit/docs/ci/grade-roster.sh grade HIDDEN [LAB]   each fetched student graded with the kit and HIDDEN
#   bash kit/docs/ci/grade-roster.sh verdict          exit 1, naming them, if a student could not be graded
# fetch reads PPLAB_SERVER (the forge's URL), PPLAB_GIT_USER (the user name the forge takes with a token:
# x-access-token on GitHub, oauth2 on GitLab) and PPLAB_SUBMISSIONS_TOKEN (a token that can read every student's
# repository) from the environment. The token goes to git in an http.extraHeader given through git's
# environment (GIT_CONFIG_COUNT), for that server only: never in a URL, a command line, .git/config or the log.
# ROSTER has one repository per line (owner/name, or group/subgroup/name on GitLab); "#" starts a comment.
# Only the lab files the kit's schedule table names (pplab info --lab-files) are taken, from the default branch's
# last commit, read from git's objects: a file that is not a plain file there (a link, a submodule) or is over
# 1 MiB is left out, so its lab's tests fail naming it; nothing else of the student's tree is ever written here.
# Everything the jobs keep goes into reports/: OWNER+NAME.json and .junit.xml (pplab grade's reports; in the
# JUnit one each test's classname starts with the student, so that one CI test view can hold the whole class),
# OWNER+NAME.txt (pplab's per-lab scores), scores.csv, summary.md (a table), and the lists of students not
# fetched or not graded. A score below full marks is a result; a student not fetched or not graded fails the
# job at its end (verdict), after every other student was graded.
set -euo pipefail
kit=$(cd "$(dirname "$0")/../.." && pwd)
pplab=$kit/build/pplab
fail() { echo "grade-roster.sh: $*" >&2; exit 2; }
[ -x "$pplab" ] || fail "$pplab is missing: build the kit first (make -C kit NO_CUDA=1)"
# a student's place in submissions/ and reports/: owner/name -> owner+name
id_of() { printf '%s' "${1//\//+}"; }
# a CSV field: quoted, its quotes doubled
csv() { printf '"%s"' "$(printf '%s' "$1" | sed 's/"/""/g')"; }

fetch() {
    local roster=${1:?usage: grade-roster.sh fetch ROSTER}
    [ -f "$roster" ] || fail "$roster: no such file: list the students' repositories in it, one owner/name a line"
    [ -n "${PPLAB_SERVER:-}" ] || fail "PPLAB_SERVER is not set: the forge's URL (github.server_url, CI_SERVER_URL)"
    [ -n "${PPLAB_GIT_USER:-}" ] || fail "PPLAB_GIT_USER is not set: x-access-token on GitHub, oauth2 on GitLab"
    [ -n "${PPLAB_SUBMISSIONS_TOKEN:-}" ] || fail "PPLAB_SUBMISSIONS_TOKEN is not set: a token that reads the students' repositories"
    local server=${PPLAB_SERVER%/} files auth tmp line n=0 seen=" " count=0
    files=$("$pplab" info --lab-files)
    auth=$(printf '%s:%s' "$PPLAB_GIT_USER" "$PPLAB_SUBMISSIONS_TOKEN" | base64 -w0)
    rm -rf submissions reports
    mkdir -p submissions reports
    : > reports/fetched.tsv
    : > reports/unfetched.tsv
    tmp=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/pplab-fetch.XXXXXX")
    while IFS= read -r line || [ -n "$line" ]; do
        n=$((n + 1))
        line=${line%%#*}
        line=$(printf '%s' "$line" | tr -d '[:space:]')
        [ -n "$line" ] || continue
        count=$((count + 1))
        if ! [[ $line =~ ^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+$ ]] || [[ /$line/ == */./* || /$line/ == */../* ]]; then
            echo "pplab: $roster:$n: '$line' is not a repository (owner/name): fix the line"
            printf '%s\t%s\n' "$line" "$roster:$n is not owner/name" >> reports/unfetched.tsv
            continue
        fi
        if [[ $seen == *" $line "* ]]; then
            echo "pplab: $roster:$n: $line is listed twice: graded once"
            continue
        fi
        seen="$seen$line "
        local id bare out mode size f notes=""
        id=$(id_of "$line")
        bare=$tmp/$id.git
        git init -q --bare "$bare"
        # the header reaches git through its environment, for this server's URLs alone
        if ! out=$(GIT_TERMINAL_PROMPT=0 GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="http.$server/.extraheader" \
                   GIT_CONFIG_VALUE_0="Authorization: Basic $auth" \
                   git -C "$bare" fetch --quiet --depth 1 --no-tags "$server/$line.git" HEAD 2>&1); then
            out=$(printf '%s\n' "$out" | grep -v '^[[:space:]]*$' | tail -n 1)
            echo "pplab: $line: could not fetch it (${out:-git failed}): check the name in $roster and that PPLAB_SUBMISSIONS_TOKEN can read it"
            printf '%s\t%s\n' "$line" "not fetched: ${out:-git failed}" >> reports/unfetched.tsv
            rm -rf "$bare"
            continue
        fi
        mkdir -p "submissions/$id"
        for f in $files; do
            mode=$(git -C "$bare" ls-tree FETCH_HEAD -- "labs/$f" | awk '{print $1 " " $2}')
            case $mode in
            "100644 blob" | "100755 blob")
                size=$(git -C "$bare" cat-file -s "FETCH_HEAD:labs/$f")
                if [ "$size" -gt 1048576 ]; then
                    notes="$notes labs/$f is over 1 MiB, left out;"
                    continue
                fi
                mkdir -p "submissions/$id/$(dirname "$f")"
                git -C "$bare" cat-file blob "FETCH_HEAD:labs/$f" > "submissions/$id/$f" ;;
            "") notes="$notes labs/$f is missing;" ;;
            *) notes="$notes labs/$f is not a plain file (a link or a submodule), left out;" ;;
            esac
        done
        printf '%s\t%s\t%s\n' "$line" "$(git -C "$bare" rev-parse FETCH_HEAD)" "${notes# }" >> reports/fetched.tsv
        echo "pplab: $line: fetched $(git -C "$bare" rev-parse --short FETCH_HEAD)${notes:+ (${notes% })}"
        rm -rf "$bare"
    done < "$roster"
    rm -rf "$tmp"
    [ "$count" -gt 0 ] || fail "$roster names no repository: add one owner/name a line"
}

grade() {
    local hidden=${1:?usage: grade-roster.sh grade HIDDEN [LAB]} lab=${2:-all}
    [ -f "$hidden" ] || fail "$hidden: no such file: the hidden configuration goes at the grading repository's root"
    # the warm-up's graded cases are drawn with the file's seed: without one they are the public, answerable ones
    sed 's/#.*//' "$hidden" | grep -Eq '^[[:space:]]*warmup-seed=[0-9]+[[:space:]]*$' ||
        fail "$hidden has no warmup-seed=N line: add one (a number of your own, kept secret), or the warm-up is graded on its public cases"
    [ -f reports/fetched.tsv ] || fail "nothing fetched: run grade-roster.sh fetch first"
    command -v python3 >/dev/null || fail "python3 is missing (it reads the JSON reports): apt-get install python3"
    local line commit notes id rc score max result
    : > reports/ungraded.tsv
    echo "student,commit,score,max_score,result" > reports/scores.csv
    {
        echo "| student | commit | score | result |"
        echo "|---|---|---|---|"
    } > reports/summary.md
    while IFS=$'\t' read -r line commit notes; do
        id=$(id_of "$line")
        echo "== $line ${commit:0:12}${notes:+ ($notes)}"
        set +e
        NO_COLOR=1 "$pplab" grade --impl "submissions/$id" --lab "$lab" --config "$hidden" --quiet \
            --json "reports/$id.json" --junit "reports/$id.junit.xml" > "reports/$id.txt" 2>&1
        rc=$?
        set -e
        cat "reports/$id.txt"
        if [ $rc -le 1 ] && [ -f "reports/$id.json" ]; then
            read -r score max < <(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(r["score"], r["max_score"])' "reports/$id.json")
            result=$([ $rc = 0 ] && echo "full marks" || echo "points lost")
            # one test view for the class: each test's classname starts with the student (no line of a report
            # that came from the run starts with "<testcase", so only the grader's own lines match)
            sed -i -E "/^[[:space:]]*<testcase /s|classname=\"pplab\\.|classname=\"$line.|" "reports/$id.junit.xml"
        else
            score=- max=- result="not graded: pplab grade exited $rc ($(tail -n 1 "reports/$id.txt"))"
            printf '%s\t%s\n' "$line" "$result" >> reports/ungraded.tsv
            echo "pplab: $line: $result"
        fi
        echo "| $line | ${commit:0:12} | $score/$max | $result${notes:+; $notes} |" >> reports/summary.md
        printf '%s,%s,%s,%s,%s\n' "$line" "$commit" "$score" "$max" "$(csv "$result")" >> reports/scores.csv
    done < reports/fetched.tsv
    while IFS=$'\t' read -r line why; do
        echo "| $line | - | - | $why |" >> reports/summary.md
        printf '%s,,,,%s\n' "$line" "$(csv "$why")" >> reports/scores.csv
    done < reports/unfetched.tsv
    echo
    cat reports/summary.md
}

verdict() {
    local bad=0 total line why
    total=$(cat reports/fetched.tsv reports/unfetched.tsv 2>/dev/null | wc -l)
    for f in reports/unfetched.tsv reports/ungraded.tsv; do
        [ -f "$f" ] || { echo "pplab: $f is missing: the grading stopped before it; see the steps above"; exit 1; }
        while IFS=$'\t' read -r line why; do
            bad=$((bad + 1))
            echo "pplab: $line was not graded: $why"
        done < "$f"
    done
    if [ "$bad" -gt 0 ]; then
        echo "pplab: $bad of $total students could not be graded (listed above); the others' reports are kept"
        exit 1
    fi
    echo "pplab: all $total students graded"
}

case "${1:-}" in
fetch) fetch "${@:2}" ;;
grade) grade "${@:2}" ;;
verdict) verdict ;;
*) fail "usage: grade-roster.sh fetch ROSTER | grade HIDDEN [LAB] | verdict" ;;
esac
