"""Drives the labeling page in headless Chromium (Debian's chromium and chromedriver, through
Selenium): places two keypoints by clicking the canvas, moves one by dragging, deletes the other
with a right-click, reloads, and prints what the page then shows as one JSON line.

With `extras` (a server started with --refine): keys for the next frame and bodypart, undo and
redo, a second tab that sees a change made in the first, and accepting the network's points.

With `refused CSV`: one point placed, then a typo written into CSV (as a text editor would) and
another click, which the server refuses; prints what the page's status line then says.

With `unreadable`: the labels cannot be read from the start; prints the status line and whether
the frame's image is shown all the same.

With `multi` (DeepLabCut's multi-animal example, one unlabeled frame): picks individuals with the
keys and the list, places points for two of them, gives one point to a third individual, is
refused giving one to an individual that has that bodypart, undoes and redoes the move, reloads.

Usage: browser_labeling.py URL [extras | refused CSV | unreadable | multi]  (the URL with ?token=
that labpose label prints)
The caller (browser_test.cpp) compares the printed points with the CSV on disk.
"""
import json
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.mouse_button import MouseButton
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

# How long to wait for the page to reach a state before giving up. A bound against hangs, not a
# timing the test relies on: on a loaded machine the page is only slower.
PATIENCE = 180


def settled(driver):
    """The page has loaded and no change is waiting for the server."""
    return driver.execute_script(
        "return !!(window.labpose && window.labpose.ready && window.labpose.state.pending === 0"
        " && window.labpose.state.frame)")


def screen(driver, x, y):
    at = driver.execute_script("return window.labpose.imageToClient(arguments[0], arguments[1]);", x, y)
    return round(at["x"]), round(at["y"])


def pointer(driver):
    return ActionBuilder(driver)


def click(driver, x, y, button=MouseButton.LEFT):
    actions = pointer(driver)
    actions.pointer_action.move_to_location(*screen(driver, x, y))
    actions.pointer_action.pointer_down(button)
    actions.pointer_action.pointer_up(button)
    actions.perform()
    WebDriverWait(driver, PATIENCE).until(settled)


def drag(driver, start, end):
    actions = pointer(driver)
    sx, sy = screen(driver, *start)
    ex, ey = screen(driver, *end)
    actions.pointer_action.move_to_location(sx, sy)
    actions.pointer_action.pointer_down(MouseButton.LEFT)
    for step in range(1, 11):
        actions.pointer_action.move_to_location(round(sx + (ex - sx) * step / 10),
                                                round(sy + (ey - sy) * step / 10))
    actions.pointer_action.pointer_up(MouseButton.LEFT)
    actions.perform()
    WebDriverWait(driver, PATIENCE).until(settled)


def points(driver):
    return driver.execute_script("return window.labpose.state.frame.points;")


def wait_for(driver, script, *arguments):
    WebDriverWait(driver, PATIENCE).until(
        lambda d: settled(d) and d.execute_script(script, *arguments))


def keys(driver, *sequence, control=False, shift=False):
    chain = ActionChains(driver)
    modifiers = ([Keys.CONTROL] if control else []) + ([Keys.SHIFT] if shift else [])
    for modifier in modifiers:
        chain.key_down(modifier)
    chain.send_keys(*sequence)
    for modifier in modifiers:
        chain.key_up(modifier)
    chain.perform()


def show(driver, image):
    driver.execute_script("document.querySelector(`#frames li[data-image='${arguments[0]}']`).click();",
                          image)
    wait_for(driver, "return window.labpose.state.frame.image === arguments[0];", image)


def place_move_delete(driver):
    """The issue's scenario: two clicks, a drag, a right-click, a reload."""
    bodyparts = driver.execute_script("return window.labpose.state.project.bodyparts;")
    # Two keypoints by clicking: the current bodypart (snout), then the next (leftear).
    click(driver, 10.5, 20.5)
    assert points(driver)[0] is not None, points(driver)
    click(driver, 40.25, 30.75)
    after_clicks = points(driver)
    assert after_clicks[1] is not None, after_clicks
    # Move the snout by dragging it, delete the leftear with a right-click.
    drag(driver, (after_clicks[0]["x"], after_clicks[0]["y"]), (20.5, 10.5))
    click(driver, after_clicks[1]["x"], after_clicks[1]["y"], MouseButton.RIGHT)
    driver.refresh()
    WebDriverWait(driver, PATIENCE).until(settled)
    shown = driver.execute_script(
        "return [...document.querySelectorAll('#bodyparts li')]"
        ".map((li) => [li.dataset.bodypart, li.querySelector('.where').textContent]);")
    return {"bodyparts": bodyparts, "after_clicks": after_clicks, "points": points(driver),
            "list": shown}


def extras(driver):
    # → goes to the next frame, ↓ to the next bodypart; a click places that one.
    keys(driver, Keys.ARROW_RIGHT)
    wait_for(driver, "return window.labpose.state.frame.image === 'img001.png';")
    keys(driver, Keys.ARROW_DOWN)
    assert driver.execute_script("return window.labpose.state.bodypart;") == 1
    click(driver, 30, 30)
    placed = points(driver)[1]
    assert placed is not None
    keys(driver, "z", control=True)
    wait_for(driver, "return window.labpose.state.frame.points[1] === null;")
    keys(driver, "y", control=True)
    wait_for(driver, "return window.labpose.state.frame.points[1] !== null;")
    assert points(driver)[1] == placed, (points(driver), placed)
    # A second tab on the same frame sees the point deleted in the first.
    first, page = driver.current_window_handle, driver.current_url
    driver.switch_to.new_window("tab")
    second = driver.current_window_handle
    driver.get(page)  # the cookie carries the token
    WebDriverWait(driver, PATIENCE).until(settled)
    show(driver, "img001.png")
    assert points(driver)[1] == placed, points(driver)
    driver.switch_to.window(first)
    click(driver, placed["x"], placed["y"], MouseButton.RIGHT)
    assert points(driver)[1] is None
    driver.switch_to.window(second)
    wait_for(driver, "return window.labpose.state.frame.points[1] === null;")
    second_tab = points(driver)
    driver.close()
    driver.switch_to.window(first)
    # --refine: the network's points of img003 are shown, A accepts them.
    show(driver, "img003.png")
    machine = driver.execute_script("return window.labpose.state.frame.machine;")
    assert machine[0] is not None and machine[3] is None, machine
    keys(driver, "a")
    wait_for(driver, "return window.labpose.state.frame.points[2] !== null;")
    accepted = points(driver)
    return {"placed": placed, "second_tab": second_tab, "accepted": accepted}


def refused(driver, csv):
    click(driver, 10.5, 20.5)
    with open(csv, encoding="utf-8") as file:
        text = file.read()
    with open(csv, "w", encoding="utf-8") as file:
        file.write(text.rstrip("\n") + "x\n")  # the last row's last cell is no number now
    click(driver, 40.25, 30.75)
    status = driver.execute_script("return document.getElementById('status').textContent;")
    return {"status": status, "points": points(driver)}


def current_individual(driver):
    return driver.execute_script(
        "const s = window.labpose.state; return s.project.keypoints[s.bodypart].individual;")


def shown_bodyparts(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('#bodyparts li')].map((li) => li.dataset.bodypart);")


def move_point_to(driver, individual):
    """Gives the selected point to `individual` with the control under the individuals list."""
    Select(driver.find_element(By.ID, "move-to")).select_by_value(individual)
    driver.find_element(By.ID, "move").click()
    WebDriverWait(driver, PATIENCE).until(settled)


def multi_animal(driver):
    individuals = driver.execute_script(
        "return [...document.querySelectorAll('#individuals li')].map((li) => li.dataset.individual);")
    # Keys: Shift+Tab from individual1 goes round to single (its own bodyparts), 2 picks individual2.
    keys(driver, Keys.TAB, shift=True)
    single = [current_individual(driver), shown_bodyparts(driver)]
    keys(driver, "2")
    assert current_individual(driver) == "individual2", current_individual(driver)
    # Two clicks: individual2's bodypart1, then its next bodypart.
    click(driver, 100.5, 100.5)
    click(driver, 200.5, 120.5)
    # The list: individual1, its bodypart1, one click.
    driver.find_element(By.CSS_SELECTOR, "#individuals li[data-individual='individual1']").click()
    driver.find_element(By.CSS_SELECTOR, "#bodyparts li[data-bodypart='bodypart1']").click()
    click(driver, 300.5, 300.5)
    # A click on individual2's bodypart2 selects it; it goes to individual3.
    click(driver, 200.5, 120.5)
    selected = current_individual(driver)
    move_point_to(driver, "individual3")
    wait_for(driver, "return window.labpose.state.frame.points[7] !== null;")
    # individual1's bodypart1 cannot go to individual2, who has a bodypart1 here.
    click(driver, 300.5, 300.5)
    move_point_to(driver, "individual2")
    refused = driver.execute_script("return document.getElementById('status').textContent;")
    # Undo gives the point back to individual2, redo to individual3 again.
    keys(driver, "z", control=True)
    wait_for(driver, "return window.labpose.state.frame.points[4] !== null"
                     " && window.labpose.state.frame.points[7] === null;")
    keys(driver, "y", control=True)
    wait_for(driver, "return window.labpose.state.frame.points[7] !== null;")
    driver.refresh()
    WebDriverWait(driver, PATIENCE).until(settled)
    counts = driver.execute_script(
        "return [...document.querySelectorAll('#frames li .count')].map((c) => c.textContent);")
    return {"individuals": individuals, "single": single, "selected": selected, "refused": refused,
            "points": points(driver), "counts": counts}


def unreadable(driver):
    return driver.execute_script(
        "return {status: document.getElementById('status').textContent,"
        " picture: window.labpose.state.picture !== null, frame: window.labpose.state.frame};")


def main():
    url = sys.argv[1]
    if sys.argv[2:3] == ["refused"]:
        scenario = lambda driver: refused(driver, sys.argv[3])  # noqa: E731
    elif sys.argv[2:] == ["unreadable"]:
        scenario = unreadable
    elif sys.argv[2:] == ["multi"]:
        scenario = multi_animal
    else:
        scenario = extras if sys.argv[2:] == ["extras"] else place_move_delete
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    profile = tempfile.TemporaryDirectory(prefix="labpose-chromium-")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--user-data-dir={profile.name}", "--window-size=1200,800"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(url)
        if scenario is unreadable:  # no frame to settle on: wait for the page to have started
            WebDriverWait(driver, PATIENCE).until(
                lambda d: d.execute_script("return !!(window.labpose && window.labpose.ready);"))
        else:
            WebDriverWait(driver, PATIENCE).until(settled)
        assert "token=" not in driver.current_url, driver.current_url
        print(json.dumps(scenario(driver)))
    finally:
        driver.quit()
        profile.cleanup()


if __name__ == "__main__":
    main()
