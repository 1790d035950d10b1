"""A small package of the user's: the corpus calls helpers from its modules
(``from tests.userpkg.physics import energy``, ``import tests.userpkg.physics as ph``)."""
