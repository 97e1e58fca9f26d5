"""This tab's place in a live class (``bertlens.rooms``).

The room's code and the student's seat (an anonymous random id) live in the URL, like every view: a reload, or a
reconnect to another replica behind the balancer, is the same student in the same room. The teacher's host key
never does: the teacher's address bar is on the projector. It lives in the session that opened the room and in this
browser's ``HOST_COOKIE`` (a reload or another replica reads it when its session starts; ``st.context.cookies``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import streamlit as st

from bertlens.rooms import (
    LIMITS,
    RoomError,
    client_address,
    client_key,
    new_student_id,
    normalise_code,
    valid_student_id,
)
from components.services.classroom import room_store
from components.services.settings import settings
from components.state.params import warn_bad_param

ROOM, SEAT = "room", "seat"  # URL parameters
HOST_COOKIE = "bertlens_host"  # "CODE.SECRET": this browser opened room CODE
FORWARDED_FOR = "X-Forwarded-For"  # set by the proxy in front (deploy/haproxy.cfg), read when trusted
MEMBER = "_class_member"  # session: the Membership of the room in the URL


@dataclass(frozen=True)
class Membership:
    code: str
    seat: str  # the student's anonymous id (the teacher's tab has one too, unused)
    secret: str | None = None  # the host key: this browser opened the room

    @property
    def hosting(self) -> bool:
        return self.secret is not None


def membership() -> Membership | None:
    """The live class this tab is in: the URL's room (a sidebar page switch drops the URL's parameters: put back),
    with this tab's seat and, if this browser opened it, the host key. None outside a class."""
    held: Membership | None = st.session_state.get(MEMBER)
    raw = st.query_params.get(ROOM)
    if raw is None:
        if held is not None:
            st.query_params.update({ROOM: held.code, SEAT: held.seat})
        return held
    warn_bad_param(ROOM, lambda value: normalise_code(value) is not None, "a room code of 6 letters and digits")
    code = normalise_code(raw)
    if code is None:
        leave_class()
        return None
    if held is None or held.code != code:
        seat = st.query_params.get(SEAT)
        held = Membership(code, seat if seat and valid_student_id(seat) else new_student_id(), _host_key(code))
        st.session_state[MEMBER] = held
    st.query_params.update({ROOM: held.code, SEAT: held.seat})
    return held


def in_a_class() -> bool:
    """Whether this tab is in a live class, or its link names one (without reading the store)."""
    return MEMBER in st.session_state or ROOM in st.query_params


def _host_key(code: str) -> str | None:
    """This browser's host key for room ``code``, if it is the right one."""
    cookie = st.context.cookies.get(HOST_COOKIE)
    if not isinstance(cookie, str):  # none (AppTest's context has no real cookies)
        return None
    cookie_code, _, secret = cookie.partition(".")
    try:
        return secret if cookie_code == code and room_store().is_host(code, secret, time.time()) else None
    except RoomError:  # no such room (any more): no host either
        return None


def host_of(code: str, secret: str) -> None:
    """This tab opened room ``code``: its host from now on (``keep_host_key`` tells this browser)."""
    st.session_state[MEMBER] = Membership(code, new_student_id(), secret)
    st.query_params.update({ROOM: code, SEAT: st.session_state[MEMBER].seat})


def keep_host_key(member: Membership) -> None:
    """This browser's host key for the room's life, so that a reload or another replica still knows the teacher.
    Drawn on the teacher's pages only: no student's page, no link and no visible text carries the key."""
    if member.secret is not None:
        st.html(
            f'<script>document.cookie = "{HOST_COOKIE}={member.code}.{member.secret}; '
            f'max-age={int(LIMITS.room_seconds)}; path=/; SameSite=Strict";</script>',
            unsafe_allow_javascript=True,
        )


def leave_class() -> None:
    """Out of the class: its parameters out of the URL, and not put back."""
    st.session_state.pop(MEMBER, None)
    for name in (ROOM, SEAT):
        st.query_params.pop(name, None)


def this_client() -> str | None:
    """This session's client address as the store counts it (``client_key``): the connection's, or behind a proxy
    trusted to set it (``BERTLENS_TRUST_FORWARDED_FOR``), the one its ``X-Forwarded-For`` names; None when unknown
    (a local connection), and then only this tab's own limits apply."""
    forwarded = st.context.headers.get_all(FORWARDED_FOR)
    return client_key(client_address(st.context.ip_address, forwarded, settings().trust_forwarded_for))
