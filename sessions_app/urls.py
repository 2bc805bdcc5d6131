"""HTTP URL patterns of the sessions app (namespace "sessions"). These are permalinks people share:
``/s/<session>/`` is a session at its leaf, ``/s/<session>/e/<entry>/`` the branch through an entry."""

from django.urls import path

from . import converters  # noqa: F401 - registers the "sid" and "eid" converters
from .views import actions, beam, chat, compare, jumps, pages, search

app_name = "sessions"

urlpatterns = [
    path("", pages.session_list, name="list"),
    path("new/", actions.new_session, name="new"),
    path("search/", search.search_page, name="search"),
    path("sidebar/", pages.sidebar, name="sidebar"),
    path("s/<sid:session_id>/", pages.session_page, name="session"),
    path("s/<sid:session_id>/e/<eid:entry_id>/", pages.session_page, name="entry"),
    path("s/<sid:session_id>/travel/", pages.travel, name="travel"),
    path("s/<sid:session_id>/older/", pages.older_entries, name="older"),
    path("s/<sid:session_id>/newer/", jumps.newer_entries, name="newer"),
    path("s/<sid:session_id>/jump/", jumps.jump_to_date, name="jump"),
    path("s/<sid:session_id>/jumps/", jumps.jump_places, name="jumps"),
    path("s/<sid:session_id>/tree/", pages.tree_panel, name="tree"),
    path("s/<sid:session_id>/tree/run/", pages.tree_run, name="tree_run"),
    path("s/<sid:session_id>/e/<eid:entry_id>/block/<int:block>/", pages.entry_block, name="block"),
    path("s/<sid:session_id>/e/<eid:entry_id>/raw/", pages.entry_raw, name="raw"),
    path("s/<sid:session_id>/e/<eid:entry_id>/text/", pages.entry_text, name="text"),
    path("s/<sid:session_id>/e/<eid:entry_id>/actions/", pages.entry_actions, name="actions"),
    path("s/<sid:session_id>/send/", chat.send, name="send"),
    path("s/<sid:session_id>/regenerate/", chat.regenerate, name="regenerate"),
    path("s/<sid:session_id>/stop/", chat.stop, name="stop"),
    path("s/<sid:session_id>/beam/", beam.ask, name="beam"),
    path("s/<sid:session_id>/beam/stop/", beam.stop_all, name="beam_stop"),
    path("s/<sid:session_id>/beam/fuse/", beam.fuse, name="beam_fuse"),
    path("s/<sid:session_id>/compact/", chat.compact, name="compact"),
    path("s/<sid:session_id>/tail-fork/", chat.tail_fork, name="tail_fork"),
    path("s/<sid:session_id>/navigate/", chat.navigate, name="navigate"),
    path("s/<sid:session_id>/label/", actions.label, name="label"),
    path("s/<sid:session_id>/rename/", actions.rename, name="rename"),
    path("s/<sid:session_id>/fork/", actions.fork, name="fork"),
    path("s/<sid:session_id>/settings/", pages.composer_settings, name="settings"),
    path("s/<sid:session_id>/model/", actions.set_model, name="model"),
    path("s/<sid:session_id>/thinking/", actions.set_thinking, name="thinking"),
    path("s/<sid:session_id>/compare/", compare.compare_page, name="compare"),
    path("s/<sid:session_id>/map/", compare.map_page, name="map"),
    path("s/<sid:session_id>/map/data/", compare.map_data, name="map_data"),
]
