# Sourced by `make test`. When GATEHOUSE_TEST_DATABASE_URL is unset and a local Postgres
# answers (as on the CI machine), create a fresh database for this run so the Postgres
# half of the suite runs too. Test servers then create one database each under it.
if [ -z "${GATEHOUSE_TEST_DATABASE_URL:-}" ] && command -v psql >/dev/null 2>&1 \
   && psql -h 127.0.0.1 -U postgres -d postgres -Atqc 'select 1' >/dev/null 2>&1; then
  db="gatehouse_test_$(date +%s)_$$"
  psql -h 127.0.0.1 -U postgres -d postgres -qc "CREATE DATABASE $db" >/dev/null
  # Test servers drop their own databases; this one goes when the make recipe's shell
  # exits (the trap keeps the test run's exit status).
  trap "psql -h 127.0.0.1 -U postgres -d postgres -qc 'DROP DATABASE IF EXISTS $db WITH (FORCE)' >/dev/null 2>&1 || true" EXIT
  export GATEHOUSE_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
  echo "make test: using fresh Postgres database $db"
elif [ -z "${GATEHOUSE_TEST_DATABASE_URL:-}" ]; then
  echo "make test: no Postgres found; running the SQLite half only (set GATEHOUSE_TEST_DATABASE_URL to include Postgres)"
fi
