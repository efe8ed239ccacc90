//! The PostgreSQL team store itself: connecting, migrations, what errors show.

use crate::support::pg_db;
use sessiondb::pg::PgStore;

#[test]
fn connect_migrates_once_and_again_is_a_no_op() {
    let Some(db) = pg_db("connect_migrates_once_and_again_is_a_no_op") else {
        return;
    };
    let first = PgStore::connect(&db.url).expect("connect");
    let second = PgStore::connect(&db.url).expect("connect again");
    let count = |s: &PgStore| {
        s.read(|tx| {
            Ok(tx
                .query_one("SELECT count(*) FROM refinery_schema_history", &[])?
                .get::<_, i64>(0))
        })
        .expect("history")
    };
    assert_eq!(count(&first), 1);
    assert_eq!(count(&second), 1);
}

#[test]
fn migrations_from_many_processes_at_once_do_not_collide() {
    let Some(db) = pg_db("migrations_from_many_processes_at_once_do_not_collide") else {
        return;
    };
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let url = db.url.clone();
            std::thread::spawn(move || PgStore::connect(&url).map(drop))
        })
        .collect();
    for h in handles {
        h.join().expect("thread").expect("connect");
    }
}

#[test]
fn a_refused_login_names_the_server_without_the_password() {
    let Some(db) = pg_db("a_refused_login_names_the_server_without_the_password") else {
        return;
    };
    // A database that does not exist, with a password in the URL.
    let url = db.url.replacen("://", "://sessiondb:hunter2@", 1).replacen(
        "://sessiondb:hunter2@sessiondb@",
        "://sessiondb:hunter2@",
        1,
    ) + "_missing";
    let err = PgStore::connect(&url).err().expect("must fail").to_string();
    assert!(err.contains("cannot connect to"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    assert!(err.contains("***"), "{err}");
}
