"""Shared by the scripts that write test tables with pypaimon (make_*_table(s).py)."""

import os
import shutil

from pypaimon import CatalogFactory


def fresh_catalog(warehouse, db):
    """A catalog over `warehouse` with database `db` created empty (an earlier one removed),
    and the database's directory."""
    db_dir = os.path.join(warehouse, f"{db}.db")
    if os.path.exists(db_dir):
        shutil.rmtree(db_dir)
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database(db, True)
    return catalog, db_dir
