package errorssvc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// table is where endpoint 3 stores its texts: both are created at start-up
// if missing; the variant of the endpoint in use writes and prunes its own.
type table struct {
	name, schema string
}

// records is the table of endpoint 3 as planted.
//
// DEFECT(ERR-02): the contract promises text up to 255 characters, but the
// column is declared 16 wide and its check admits at most 15 characters.
var records = table{"records", `CREATE TABLE IF NOT EXISTS records (
	id   INTEGER PRIMARY KEY,
	text VARCHAR(16) CHECK (length(text) < 16)
)`}

// texts holds what the contract promises, text of up to 255 characters: the
// table of endpoint 3 when its defect is switched off.
var texts = table{"texts", `CREATE TABLE IF NOT EXISTS texts (
	id   INTEGER PRIMARY KEY,
	text TEXT NOT NULL CHECK (length(text) <= 255)
)`}

// recordStore keeps the texts of endpoint 3 in SQLite, at most maxRows of
// them a table: each insert prunes the oldest beyond the cap in the same
// transaction, so a fuzzer running for days cannot exhaust memory or disk.
//
// An in-memory store is opened at its first use rather than at start: an
// instance that is never asked to store anything does not load SQLite's
// code into memory (idle, the one process stays under 15 MB resident). A
// file's store is opened at start, so that a path it cannot open stops
// the program there.
type recordStore struct {
	db      atomic.Pointer[sql.DB] // nil until opened
	open    func() (*sql.DB, error)
	opening sync.Mutex // the first uses wait for one open
	maxRows int64
	// unwritable: a write failed in the store itself (the disk, the
	// file), and none has succeeded since.
	unwritable atomic.Bool
	// writeFailures counts them (showcase_store_write_failures_total).
	writeFailures prometheus.Counter
}

// probe is written and emptied by the readiness check of a store that
// failed to write, to see whether it writes again.
var probe = table{"probe", `CREATE TABLE IF NOT EXISTS probe (x INTEGER)`}

// writeFailure says whether err is the store failing to write (I/O, a full
// disk or database, a file it cannot open, write or read), rather than the
// value being refused (a constraint, a type SQLite cannot bind): the first
// is a broken store, the second endpoint 3 answering as it is built to.
func writeFailure(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY,
		sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_PERM:
		return true
	}
	return false
}

// failed notes the outcome of a write: a store failure makes the store
// unwritable until a write succeeds.
func (s *recordStore) failed(err error) {
	switch {
	case err == nil:
		if s.unwritable.Load() {
			s.unwritable.Store(false)
		}
	case writeFailure(err):
		s.unwritable.Store(true)
		if s.writeFailures != nil {
			s.writeFailures.Inc()
		}
	}
}

// ready reports whether the store answers and writes. After a write
// failure it writes a probe row (and removes it) to find out.
func (s *recordStore) ready(ctx context.Context) error {
	db := s.db.Load()
	if db == nil {
		return nil // in memory, not opened yet: nothing to fail
	}
	if err := db.PingContext(ctx); err != nil {
		return err
	}
	if !s.unwritable.Load() {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err == nil {
		if _, err = tx.ExecContext(ctx, `INSERT INTO probe (x) VALUES (1)`); err == nil {
			if _, err = tx.ExecContext(ctx, `DELETE FROM probe`); err == nil {
				err = tx.Commit()
			}
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}
	s.failed(err)
	if err != nil {
		return fmt.Errorf("the store cannot write: %w", err)
	}
	return nil
}

// openStore opens the database at path and creates both tables, or makes
// an in-memory store that does so at its first use when path is empty.
func openStore(path string, maxRows int) (*recordStore, error) {
	s := &recordStore{maxRows: int64(maxRows), open: func() (*sql.DB, error) { return openDB(path) }}
	if path != "" {
		db, err := openDB(path)
		if err != nil {
			return nil, err
		}
		s.db.Store(db)
	}
	return s, nil
}

// database is the store's database, opened now if it was not yet: once,
// whatever the requests that ask at the same time; an open that failed is
// tried again by the next one.
func (s *recordStore) database() (*sql.DB, error) {
	if db := s.db.Load(); db != nil {
		return db, nil
	}
	s.opening.Lock()
	defer s.opening.Unlock()
	if db := s.db.Load(); db != nil {
		return db, nil
	}
	db, err := s.open()
	if err != nil {
		return nil, err
	}
	s.db.Store(db)
	return db, nil
}

// openDB opens the database at path, or an in-memory one when path is
// empty, and creates both tables.
func openDB(path string) (*sql.DB, error) {
	dsn := ":memory:"
	if path != "" {
		// Created private: the table holds whatever clients sent. SQLite
		// gives its WAL and shared-memory files the same mode.
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open sqlite %q: %w", path, err)
		}
		_ = f.Close()
		q := url.Values{"_pragma": {"busy_timeout(5000)", "journal_mode(WAL)", "synchronous(NORMAL)"}}
		dsn = path + "?" + q.Encode()
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %q: %w", path, err)
	}
	// One connection: an in-memory database lives and dies with its
	// connection, and a single writer never meets SQLITE_BUSY.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	// Temporary tables and indices stay in memory: the container's root
	// file system is read-only.
	if _, err := db.Exec(`PRAGMA temp_store = MEMORY`); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlite %q: %w", path, err)
	}
	for _, t := range []table{records, texts, probe} {
		if _, err := db.Exec(t.schema); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("create schema in %q: %w", path, err)
		}
	}
	return db, nil
}

// insert stores value in t (text, number or NULL) and prunes the oldest rows
// beyond the cap. A failed insert is rolled back and returns SQLite's error;
// a failure of the store itself makes it unwritable (see ready).
func (s *recordStore) insert(ctx context.Context, t table, value any) (err error) {
	defer func() { s.failed(err) }()
	db, err := s.database()
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO `+t.name+` (text) VALUES (?)`, value)
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	if id > s.maxRows {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t.name+` WHERE id <= ?`, id-s.maxRows); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// count returns the number of rows t holds.
func (s *recordStore) count(ctx context.Context, t table) (int64, error) {
	db, err := s.database()
	if err != nil {
		return 0, err
	}
	var n int64
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM `+t.name).Scan(&n)
	return n, err
}

func (s *recordStore) close() error {
	s.opening.Lock()
	defer s.opening.Unlock()
	if db := s.db.Load(); db != nil {
		return db.Close()
	}
	return nil
}
